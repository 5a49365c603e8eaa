//! The HTML report's pages: `index.html` lists the run folders per GPU and links a page per
//! folder under `pages/`, with its tables and SVG charts of its rows alone beside it; the
//! charts across GPUs stay in `charts/` (shared with `report.md`).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use minijinja::{context, Value};

use crate::export::safe::{check_dir, prepare_dir};
use crate::export::write_atomic;
use crate::plot;
use crate::rows::Catalog;

use super::html::{self, GpuView, Nav, Neighbour, PageLink};
use super::load::RunFolder;
use super::tables::{self, GpuKey};
use super::ReportError;

pub const PAGES: &str = "pages";

/// A page's file stem: the folder's label as a slug, numbered when two labels slug alike.
fn unique_slug(label: &str, taken: &mut HashSet<String>) -> String {
    let base = plot::slug(label);
    let mut slug = base.clone();
    let mut n = 2;
    while !taken.insert(slug.clone()) {
        slug = format!("{base}-{n}");
        n += 1;
    }
    slug
}

fn chart_views(charts: &[PathBuf]) -> Vec<Value> {
    let chart = |c: &PathBuf| html::block(&super::doc::Block::Chart(c.clone()));
    charts.iter().map(chart).collect()
}

/// The pages' file stems, per GPU and folder in the index's order.
fn plan_slugs(groups: &[(GpuKey, Vec<&RunFolder>)]) -> Vec<Vec<String>> {
    let mut taken = HashSet::new();
    groups
        .iter()
        .map(|(_, list)| {
            list.iter()
                .map(|f| unique_slug(&f.label, &mut taken))
                .collect()
        })
        .collect()
}

fn navigation(groups: &[(GpuKey, Vec<&RunFolder>)], slugs: &[Vec<String>]) -> Vec<Nav> {
    let order: Vec<Neighbour> = groups
        .iter()
        .zip(slugs)
        .flat_map(|((_, list), s)| list.iter().zip(s))
        .map(|(f, slug)| Neighbour {
            href: format!("{slug}.html"),
            label: f.label.clone(),
        })
        .collect();
    (0..order.len())
        .map(|i| Nav {
            prev: i.checked_sub(1).map(|p| order[p].clone()),
            next: order.get(i + 1).cloned(),
        })
        .collect()
}

/// Writes one folder's page and its charts; returns the index's line for it and the files.
fn write_page(
    catalog: &Catalog,
    folder: &RunFolder,
    gpu: &GpuKey,
    slug: &str,
    nav: &Nav,
    out: &Path,
) -> Result<(PageLink, Vec<PathBuf>), ReportError> {
    let pages = out.join(PAGES);
    // The charts go to `pages/<slug>-charts/`, relative to `pages/`. The suffix keeps the
    // folder apart from every page: a slug may end in `.html` (a run folder of that name), a
    // folder name never does.
    let chart_dir = pages.join(format!("{slug}-charts"));
    let charts = super::draw_into(catalog, std::slice::from_ref(folder), &chart_dir, &pages)?;
    let mut files: Vec<PathBuf> = charts.iter().map(|c| pages.join(c)).collect();
    let page = pages.join(format!("{slug}.html"));
    let text = html::render(
        "page.html",
        context! {
            title => folder.label,
            style => format!("../{}", html::STYLE_FILE),
            gpu => gpu.full_title(),
            nav,
            blocks => html::blocks(&tables::folder_doc(catalog, folder)),
            charts => chart_views(&charts),
        },
    );
    write_atomic(&page, text.as_bytes())?;
    files.push(page);
    let prs = folder.prs();
    let link = PageLink {
        href: format!("{PAGES}/{slug}.html"),
        label: folder.label.clone(),
        measurements: folder.measurements().len(),
        prs: prs.len(),
        similar: prs.iter().filter(|r| r.similar).count(),
        fair: prs.iter().filter(|r| r.fair).count(),
    };
    Ok((link, files))
}

/// Writes `index.html` and every folder's page into `out`; the index shows those of `charts`
/// (relative to `out`) that are across GPUs. Returns the files written.
pub fn write_site(
    catalog: &Catalog,
    folders: &[RunFolder],
    roots: &[String],
    charts: &[PathBuf],
    out: &Path,
) -> Result<Vec<PathBuf>, ReportError> {
    // A link planted at `pages/` would take every page elsewhere.
    check_dir(out, true)?;
    prepare_dir(&out.join(PAGES), false)?;
    let groups = tables::per_gpu(folders);
    let slugs = plan_slugs(&groups);
    let mut navs = navigation(&groups, &slugs).into_iter();
    let (mut gpus, mut files) = (Vec::new(), Vec::new());
    for (i, ((gpu, list), slugs)) in groups.iter().zip(&slugs).enumerate() {
        let mut pages = Vec::new();
        for (f, slug) in list.iter().zip(slugs) {
            let nav = navs.next().expect("one per page");
            let (link, written) = write_page(catalog, f, gpu, slug, &nav, out)?;
            pages.push(link);
            files.extend(written);
        }
        let first_of_model = i == 0 || groups[i - 1].0.model != gpu.model;
        gpus.push(GpuView {
            id: format!("gpu-{}", i + 1),
            title: gpu.model.clone(),
            beneath: gpu.beneath(),
            first_of_model,
            pages,
            blocks: html::blocks(&tables::baselines_doc(catalog, list)),
        });
    }
    let across: Vec<PathBuf> = charts
        .iter()
        .filter(|c| c.to_string_lossy().contains(plot::GPUS_CHART))
        .cloned()
        .collect();
    let style = out.join(html::STYLE_FILE);
    write_atomic(&style, html::STYLE.as_bytes())?;
    files.push(style);
    let intro = tables::intro(folders.len(), roots, tables::models(&groups), groups.len());
    let index = out.join("index.html");
    let charts = chart_views(&across);
    let text = html::render(
        "index.html",
        context! { title => "clvscu report", style => html::STYLE_FILE, intro, gpus, charts },
    );
    write_atomic(&index, text.as_bytes())?;
    files.push(index);
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_lead_to_their_neighbours_across_gpus() {
        let folder = |label: &str| RunFolder {
            label: label.into(),
            ..RunFolder::default()
        };
        let (a, b, c) = (folder("a"), folder("b"), folder("c"));
        let gpu = |name: &str| GpuKey {
            model: name.into(),
            place: None,
            drivers: String::new(),
        };
        let groups = vec![(gpu("x"), vec![&a, &b]), (gpu("y"), vec![&c])];
        let navs = navigation(&groups, &plan_slugs(&groups));
        let hrefs = |n: &Nav| {
            (
                n.prev.as_ref().map(|p| p.href.clone()),
                n.next.as_ref().map(|p| p.href.clone()),
            )
        };
        assert_eq!(hrefs(&navs[0]), (None, Some("b.html".into())));
        assert_eq!(
            hrefs(&navs[1]),
            (Some("a.html".into()), Some("c.html".into()))
        );
        assert_eq!(hrefs(&navs[2]), (Some("b.html".into()), None));
    }

    #[test]
    fn slugs_of_pages_never_collide() {
        let mut taken = HashSet::new();
        assert_eq!(unique_slug("h100/default", &mut taken), "h100-default");
        assert_eq!(unique_slug("h100 default", &mut taken), "h100-default-2");
        assert_eq!(unique_slug("h100:default", &mut taken), "h100-default-3");
    }
}
