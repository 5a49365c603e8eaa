//! The HTML report as a reader meets it: over copies of committed H100 and H200 run folders,
//! every link of every page leads to a page of the report, every image to a chart file in it,
//! and (with a headless Chromium) the pages load and show their sections.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use assert_cmd::Command as BinCommand;

/// Two studies' folders of each GPU: one with sweeps (index), one with several studies.
const INPUTS: [&str; 4] = [
    "results/h100-2026-11-22-index",
    "results/h200-2026-11-22-index",
    "results/h100-2026-11-22-compiler",
    "results/h200-2026-11-22-compiler",
];

/// The HTML report of copies of [`INPUTS`], written to `<tmp>/out`.
fn report() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fleet = dir.path().join("fleet");
    for input in INPUTS {
        let name = Path::new(input).file_name().unwrap();
        common::copy_tree(&root.join(input), &fleet.join(name));
    }
    let out = dir.path().join("out");
    BinCommand::cargo_bin("clvscu")
        .unwrap()
        .args(["report", "--html", "--out"])
        .arg(&out)
        .arg(&fleet)
        .assert()
        .success();
    (dir, out)
}

/// The HTML files of the report: `index.html` first, then the pages.
fn html_files(out: &Path) -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = fs::read_dir(out.join("pages"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "html"))
        .collect();
    pages.sort();
    pages.insert(0, out.join("index.html"));
    pages
}

/// Undoes the escaping a template applies inside an attribute.
fn unescape(text: &str) -> String {
    text.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&#x2f;", "/")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// Every value of attribute `name` (double-quoted, as the templates and Chromium write them)
/// in tags starting `<tag`.
fn attributes(html: &str, tag: &str, name: &str) -> Vec<String> {
    let mut out = Vec::new();
    for piece in html.split(&format!("<{tag} ")).skip(1) {
        let Some(inside) = piece.split('>').next() else {
            continue;
        };
        let key = format!("{name}=\"");
        if let Some(start) = inside.find(&key) {
            let rest = &inside[start + key.len()..];
            if let Some(end) = rest.find('"') {
                out.push(unescape(&rest[..end]));
            }
        }
    }
    out
}

/// The file a relative link of `page` names, checked to lie inside `out` and to exist; a
/// link to a place on the same page (`#id`) is checked to find its element.
fn target(out: &Path, page: &Path, link: &str) -> PathBuf {
    if let Some(id) = link.strip_prefix('#') {
        let html = fs::read_to_string(page).unwrap();
        assert!(
            html.contains(&format!("id=\"{id}\"")),
            "{}: nothing has id {id}",
            page.display()
        );
        return page.canonicalize().unwrap();
    }
    assert!(
        !link.contains(':') && !link.starts_with('/'),
        "{}: {link} leaves the report",
        page.display()
    );
    let file = page.parent().unwrap().join(link.split('#').next().unwrap());
    let file = file
        .canonicalize()
        .unwrap_or_else(|e| panic!("{}: {link} does not resolve: {e}", page.display()));
    assert!(
        file.starts_with(out.canonicalize().unwrap()),
        "{}: {link} is outside the report",
        page.display()
    );
    assert!(file.is_file(), "{}: {link} is not a file", page.display());
    file
}

/// Checks `html` (the text of `page`, as written or as Chromium's DOM): its links resolve to
/// files of the report and its images to SVG files. Returns (links, images) resolved.
fn check_targets(out: &Path, page: &Path, html: &str) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let links: Vec<PathBuf> = attributes(html, "a", "href")
        .iter()
        .map(|l| target(out, page, l))
        .collect();
    for sheet in attributes(html, "link", "href") {
        target(out, page, &sheet);
    }
    let images: Vec<PathBuf> = attributes(html, "img", "src")
        .iter()
        .map(|s| target(out, page, s))
        .collect();
    for image in &images {
        let svg = fs::read_to_string(image).unwrap();
        assert!(svg.contains("<svg"), "{} is not an SVG", image.display());
    }
    (links, images)
}

/// The index and the pages link each other both ways; all targets exist.
fn check_site(out: &Path, read: impl Fn(&Path) -> String) -> usize {
    let files = html_files(out);
    let index = out.join("index.html").canonicalize().unwrap();
    let mut linked_from_index = Vec::new();
    let mut images = 0;
    for page in &files {
        let html = read(page);
        let (links, imgs) = check_targets(out, page, &html);
        images += imgs.len();
        if page.ends_with("index.html") {
            linked_from_index = links;
        } else {
            assert!(
                links.contains(&index),
                "{} has no link to the index",
                page.display()
            );
        }
    }
    for page in &files[1..] {
        assert!(
            linked_from_index.contains(&page.canonicalize().unwrap()),
            "the index does not link {}",
            page.display()
        );
    }
    images
}

#[test]
fn every_link_and_image_of_the_html_report_resolves_inside_it() {
    let (_dir, out) = report();
    let files = html_files(&out);
    // Three studies under each GPU's index tree, seven under each compiler tree, the index.
    assert_eq!(files.len(), 21, "{files:?}");
    let images = check_site(&out, |p| fs::read_to_string(p).unwrap());
    assert!(
        images >= 12,
        "each folder's page shows its charts: {images}"
    );
    let mut total = 0;
    for f in &files {
        let html = fs::read_to_string(f).unwrap();
        assert!(
            !html.contains("<svg") && !html.contains("data:"),
            "{}: a chart inline",
            f.display()
        );
        total += html.len();
    }
    // The charts are files: the pages stay far below the 1.4 MB that inlining gave for the
    // two index trees alone.
    eprintln!("HTML pages: {total} bytes");
    assert!(total < 300_000, "the HTML pages total {total} bytes");
}

#[test]
fn the_link_checker_catches_a_dead_link_and_an_image_outside_the_report() {
    let (_dir, out) = report();
    let page = out.join("index.html");
    let dead = "<a href=\"pages/missing.html\">x</a>";
    let outside = "<img src=\"../fleet/h100-2026-11-22-index/README.md\">";
    for html in [dead, outside] {
        let caught = std::panic::catch_unwind(|| check_targets(&out, &page, html));
        assert!(caught.is_err(), "{html} passed");
    }
}

#[test]
fn a_link_planted_at_the_pages_folder_is_refused_and_not_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let (out, elsewhere) = (dir.path().join("out"), dir.path().join("elsewhere"));
    fs::create_dir_all(&out).unwrap();
    fs::create_dir_all(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, out.join("pages")).unwrap();
    BinCommand::cargo_bin("clvscu")
        .unwrap()
        .args(["report", "--html", "--out"])
        .arg(&out)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join(INPUTS[0]))
        .assert()
        .failure()
        .stderr(predicates::str::contains("pages"));
    assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 0);
}

/// Chromium's binary: `CHROMIUM` when set, else the first of the usual names on PATH.
fn chromium() -> String {
    if let Ok(path) = std::env::var("CHROMIUM") {
        return path;
    }
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        if Command::new(name).arg("--version").output().is_ok() {
            return name.into();
        }
    }
    panic!("no Chromium on PATH (apt-get install -y chromium, or set CHROMIUM)");
}

/// Runs headless Chromium on `page` with `args`; its stdout.
fn headless(profile: &Path, page: &Path, args: &[&str]) -> String {
    let url = format!("file://{}", page.canonicalize().unwrap().display());
    let run = Command::new("timeout")
        .arg("120")
        .arg(chromium())
        .args(["--headless", "--no-sandbox", "--disable-gpu"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(&url)
        .output()
        .expect("chromium starts");
    assert!(
        run.status.success(),
        "chromium on {url}: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    String::from_utf8(run.stdout).unwrap()
}

/// A page that opens each of `PAGES` (file URLs) in a frame and loads every image of it as
/// the browser would, then writes per page `page <url>` and per image `ok`, `empty` or
/// `broken` with its URL into `#result`, after `done`. Frames of file URLs can be read only
/// with `--allow-file-access-from-files`.
const IMAGE_CHECK: &str = r#"<!DOCTYPE html><html><body><pre id="result">pending</pre><script>
const lines = [];
function load(src) {
  return new Promise(done => {
    const img = new Image();
    img.onload = () => done((img.naturalWidth > 0 ? "ok " : "empty ") + src);
    img.onerror = () => done("broken " + src);
    img.src = src;
  });
}
function visit(url) {
  return new Promise(done => {
    const frame = document.createElement("iframe");
    frame.onload = async () => {
      const doc = frame.contentDocument;
      if (!doc) { lines.push("unreadable " + url); return done(); }
      lines.push("page " + url);
      const srcs = [...doc.images].map(i => i.src);
      for (const r of await Promise.all(srcs.map(load))) lines.push(r);
      done();
    };
    frame.src = url;
    document.body.appendChild(frame);
  });
}
(async () => {
  for (const p of PAGES) await visit(p);
  document.getElementById("result").textContent = "done\n" + lines.join("\n");
})();
</script></body></html>"#;

/// What [`IMAGE_CHECK`] reports for `pages`: one line per page and per image.
fn images_in_browser(dir: &Path, profile: &Path, pages: &[PathBuf]) -> Vec<String> {
    let urls: Vec<String> = pages
        .iter()
        .map(|p| format!("\"file://{}\"", p.canonicalize().unwrap().display()))
        .collect();
    let check = dir.join("image-check.html");
    let script = format!("<script>const PAGES = [{}];</script>", urls.join(","));
    fs::write(
        &check,
        IMAGE_CHECK.replace("<script>", &format!("{script}<script>")),
    )
    .unwrap();
    let dom = headless(
        profile,
        &check,
        &[
            "--allow-file-access-from-files",
            "--virtual-time-budget=60000",
            "--dump-dom",
        ],
    );
    let marker = "<pre id=\"result\">";
    let start = dom.find(marker).expect("the result") + marker.len();
    let text = &dom[start..start + dom[start..].find("</pre>").unwrap()];
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    assert_eq!(lines.first().map(String::as_str), Some("done"), "{text}");
    lines[1..].to_vec()
}

#[test]
#[ignore = "needs chromium"]
fn every_image_of_the_html_report_loads_in_a_browser() {
    let (dir, out) = report();
    let profile = dir.path().join("chromium-profile");
    let pages = html_files(&out);
    let lines = images_in_browser(dir.path(), &profile, &pages);
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("page ")).count(),
        pages.len(),
        "{lines:?}"
    );
    let images: Vec<&String> = lines.iter().filter(|l| !l.starts_with("page ")).collect();
    assert!(images.len() >= 20, "{lines:?}");
    assert!(images.iter().all(|l| l.starts_with("ok ")), "{lines:?}");
    // The check sees a chart gone missing.
    let page = &pages[1];
    let html = fs::read_to_string(page).unwrap();
    let first = &attributes(&html, "img", "src")[0];
    fs::remove_file(page.parent().unwrap().join(first)).unwrap();
    let lines = images_in_browser(dir.path(), &profile, std::slice::from_ref(page));
    assert!(lines.iter().any(|l| l.starts_with("broken ")), "{lines:?}");
}

#[test]
#[ignore = "needs chromium"]
fn the_html_report_loads_in_a_browser_with_every_section() {
    let (dir, out) = report();
    let profile = dir.path().join("chromium-profile");
    let doms: std::collections::HashMap<PathBuf, String> = html_files(&out)
        .into_iter()
        .map(|p| {
            let dom = headless(&profile, &p, &["--dump-dom"]);
            (p, dom)
        })
        .collect();
    let dom = |p: &Path| doms[p].clone();
    let index = dom(&out.join("index.html"));
    for section in [
        "<h1>clvscu report</h1>",
        "<h2>NVIDIA H100 80GB HBM3",
        "<h2>NVIDIA H200",
        "<h2>PR across GPUs</h2>",
        "<nav><ul>",
    ] {
        assert!(index.contains(section), "the index lacks {section}");
    }
    for page in &html_files(&out)[1..] {
        let page_dom = dom(page);
        for section in [
            "<h3>Run folder ",
            "<h4>Performance Ratio",
            "<h4>Measurements</h4>",
            "<h4 id=\"charts\">Charts</h4>",
            "↑ all run folders",
        ] {
            assert!(
                page_dom.contains(section),
                "{} lacks {section}",
                page.display()
            );
        }
    }
    // The same link and image checks on the DOM Chromium built, not on the files' text.
    let images = check_site(&out, dom);
    assert!(images >= 20, "{images}");
    let shot = dir.path().join("index.png");
    headless(
        &profile,
        &out.join("index.html"),
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1280,2000",
        ],
    );
    let png = fs::read(&shot).expect("a screenshot");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "{}",
        png.len()
    );
}
