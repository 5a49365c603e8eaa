//! Tests of the registry and the rules every family shares.

use super::*;
use crate::backend::LaunchShape;
use plan::SideConfig;

/// A side that launches `shape` with nothing else set, as the families' own tests launch.
pub(crate) fn side(shape: LaunchShape) -> SideConfig {
    SideConfig::launch_only(shape)
}

/// The input choice of a family that takes no matrix (the study's default).
pub(crate) fn no_matrix() -> InputChoice<'static> {
    static UNIFORM: matrix::MatrixSource = matrix::MatrixSource::Uniform;
    InputChoice { matrix: &UNIFORM }
}

#[test]
fn sizes_parse() {
    assert_eq!(
        Size::parse("60989x1100").unwrap(),
        Size::matrix(60989, 1100)
    );
    assert_eq!(Size::parse("2^28").unwrap(), Size::vector(1 << 28));
    assert_eq!(Size::parse("1_000").unwrap(), Size::vector(1000));
    assert!(Size::parse("12q").is_err());
    assert!(Size::parse("2^99").is_err());
    assert_eq!(Size::matrix(3, 4).to_string(), "3x4");
}

#[test]
fn variant_names_are_unique_per_family() {
    for &f in FamilyId::all() {
        let names: Vec<_> = variants_of(f, true).iter().map(|v| v.name).collect();
        let mut dedup = names.clone();
        dedup.sort();
        dedup.dedup();
        assert_eq!(names.len(), dedup.len(), "{f:?}");
    }
}

#[test]
fn unknown_variant_lists_names() {
    let e = find_variant(FamilyId::Matvec, "listing9")
        .unwrap_err()
        .to_string();
    assert!(e.contains("listing2") && e.contains("tuned"), "{e}");
}

#[test]
fn unsafe_listing7_is_not_in_default_set() {
    assert!(variants_of(FamilyId::Matvec, false).iter().all(|v| v.safe));
    assert!(variants_of(FamilyId::Matvec, true).iter().any(|v| !v.safe));
}

#[test]
fn all_variants_leaves_out_the_one_launch_experiments() {
    let names: Vec<_> = user_variants_of(FamilyId::Reduce)
        .iter()
        .map(|v| v.name)
        .collect();
    assert!(names.contains(&"tuned"), "{names:?}");
    for experiment in [reduce::FIRST_PASS, reduce::FINAL] {
        assert!(!names.contains(&experiment), "{names:?}");
        assert!(find_variant(FamilyId::Reduce, experiment).is_ok());
    }
}

#[test]
fn local_size_rules() {
    let l7 = find_variant(FamilyId::Matvec, "listing7").unwrap();
    assert!(l7.family.family().check_local(l7, 256).is_ok());
    let e = l7
        .family
        .family()
        .check_local(l7, 96)
        .unwrap_err()
        .to_string();
    assert!(e.contains("listing7") && e.contains("power of two"), "{e}");
    assert!(l7
        .family
        .family()
        .check_local(l7, 1024)
        .unwrap_err()
        .to_string()
        .contains("512"));
    let l2 = find_variant(FamilyId::Matvec, "listing2").unwrap();
    assert!(l2.family.family().check_local(l2, 100).is_ok());
}

#[test]
fn size_rules() {
    let l2 = find_variant(FamilyId::Matvec, "listing2").unwrap();
    assert!(l2
        .family
        .family()
        .check_size(l2, Size::matrix(0, 10))
        .is_err());
    assert!(l2.family.family().check_size(l2, Size::vector(10)).is_err());
    assert!(l2
        .family
        .family()
        .check_size(l2, Size::matrix(1, 1))
        .is_ok());
    let r = find_variant(FamilyId::Reduce, "sequential").unwrap();
    assert!(r
        .family
        .family()
        .check_size(r, Size::vector(0))
        .unwrap_err()
        .to_string()
        .contains("size 0"));
    assert!(r
        .family
        .family()
        .check_size(r, Size::vector(1 << 33))
        .is_err());
}

#[test]
fn whitepaper_listing2_groups() {
    let l2 = find_variant(FamilyId::Matvec, "listing2").unwrap();
    assert_eq!(
        l2.family
            .family()
            .default_groups(l2, Size::matrix(60989, 1100), 256, 132),
        239
    );
}

#[test]
fn matvec_bytes() {
    let (b, f) = FamilyId::Matvec
        .family()
        .work("listing2", Size::matrix(2, 3), 0);
    assert_eq!(b, (6 + 3 + 2) * 4);
    assert_eq!(f, 12);
}

// The algorithm each variant implements (the fairness table's algorithm step).

fn of(family: FamilyId, name: &str) -> &'static str {
    get(family).algorithm(find_variant(family, name).unwrap())
}

#[test]
fn read_paths_share_one_algorithm_per_family() {
    for (family, groups) in [
        (FamilyId::Sobel, vec![vec!["constant", "global", "literal"]]),
        (
            FamilyId::Spmv,
            vec![
                vec!["scalar", "scalar-ro", "scalar-tex"],
                vec!["vector", "vector-ro", "vector-tex"],
            ],
        ),
        (FamilyId::Md, vec![vec!["lj", "lj-ro", "lj-tex"]]),
    ] {
        let names: Vec<&str> = groups
            .iter()
            .map(|g| {
                let first = of(family, g[0]);
                for v in g {
                    assert_eq!(of(family, v), first, "{family:?} {v}");
                }
                first
            })
            .collect();
        // Distinct kernels stay distinct algorithms (scalar is not vector).
        let mut unique = names.clone();
        unique.dedup();
        assert_eq!(unique, names, "{family:?}");
    }
    assert_eq!(of(FamilyId::Spmv, "vector-tex"), "vector");
    assert_eq!(of(FamilyId::Md, "lj-ro"), "lj");
}

#[test]
fn other_variants_are_their_own_algorithm() {
    for family in [FamilyId::Matvec, FamilyId::Reduce, FamilyId::Broadcast] {
        for v in variants_of(family, true) {
            assert_eq!(get(family).algorithm(v), v.name);
        }
    }
}

mod fuzz {
    use proptest::prelude::*;

    use super::*;

    /// Text made of what `Size::parse` treats specially, with long digit runs that overflow.
    fn size_like() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop_oneof![
                3 => "[0-9]{1,3}",
                1 => "[0-9]{18,22}",
                2 => prop::sample::select(&["x", "X", "*", "^", "_", " ", "+", "-", "0x", "é"][..])
                    .prop_map(str::to_string),
            ],
            0..8,
        )
        .prop_map(|parts| parts.concat())
    }

    fn any_variant() -> impl Strategy<Value = Variant> {
        prop::sample::select(all_variants())
    }

    const EDGES: &[u64] = &[
        0,
        1,
        2,
        u32::MAX as u64 - 1,
        u32::MAX as u64,
        u32::MAX as u64 + 1,
        u64::MAX,
    ];

    /// Edges of the u64 and u32 ranges and the 32-bit index limit, plus anything.
    fn count() -> impl Strategy<Value = u64> {
        prop_oneof![prop::sample::select(EDGES), any::<u64>(),]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        #[test]
        fn size_parse_never_panics_and_round_trips(text in ".*") {
            if let Ok(s) = Size::parse(&text) {
                prop_assert_eq!(Size::parse(&s.to_string()).unwrap(), s);
            }
        }

        #[test]
        fn size_like_text_parses_or_quotes_itself(text in size_like()) {
            match Size::parse(&text) {
                // Display is the canonical spelling: it reads back as the same size.
                Ok(s) => prop_assert_eq!(Size::parse(&s.to_string()).unwrap(), s),
                Err(e) => {
                    prop_assert!(
                        matches!(e, crate::rows::SizeError::Bad { .. } | crate::rows::SizeError::Overflow { .. }),
                        "{e:?}"
                    );
                    let quoted = format!("'{text}'");
                    prop_assert!(e.to_string().contains(&quoted), "{e}");
                }
            }
        }

        #[test]
        fn size_display_round_trips(rows in count(), cols in count()) {
            let s = Size::matrix(rows, cols);
            match rows.checked_mul(cols) {
                Some(_) => prop_assert_eq!(Size::parse(&s.to_string()).unwrap(), s),
                None => {
                    let overflow = matches!(
                        Size::parse(&s.to_string()),
                        Err(crate::rows::SizeError::Overflow { .. })
                    );
                    prop_assert!(overflow, "{s}");
                }
            }
        }

        #[test]
        fn powers_are_exact_or_refused(b in 0u64..100_000, e in 0u32..80) {
            let parsed = Size::parse(&format!("{b}^{e}")).ok();
            prop_assert_eq!(parsed, b.checked_pow(e).map(Size::vector));
        }

        #[test]
        fn family_names_parse_exactly(name in "[a-z-]{0,10}|matvec|reduce|bandwidth|flops|launch") {
            match FamilyId::parse(&name) {
                Ok(f) => prop_assert_eq!(f.name(), name.as_str()),
                Err(e) => {
                    prop_assert!(FamilyId::all().iter().all(|f| f.name() != name));
                    prop_assert!(e.to_string().contains("matvec, reduce"), "{e}");
                }
            }
        }

        #[test]
        fn variant_lookup_finds_exactly_its_own(v in any_variant(), junk in ".{0,8}") {
            prop_assert_eq!(find_variant(v.family, v.name).unwrap(), &v);
            let name = format!("{}{junk}", v.name);
            match find_variant(v.family, &name) {
                Ok(found) => prop_assert!(found.name == name && found.family == v.family),
                Err(e) => prop_assert!(e.to_string().contains(v.name), "{e}"),
            }
        }

        #[test]
        fn checks_and_counts_never_panic(
            v in any_variant(),
            rows in count(),
            cols in count(),
            local in any::<u32>(),
            groups in any::<u32>(),
            cus in any::<u32>(),
        ) {
            let v = &v;
            let size = Size::matrix(rows, cols);
            if v.family.family().check_size(v, size).is_ok() {
                // The kernels index with u32: what passes must fit.
                prop_assert!(v.family.family().elements(size) < u64::from(u32::MAX));
            }
            if v.family.family().check_local(v, local).is_ok() {
                prop_assert!(local > 0 && local >= v.min_local && local <= v.max_local);
            }
            let g = v.family.family().default_groups(v, size, local, cus);
            prop_assert!(g >= 1);
            prop_assert!(u64::from(g) * u64::from(local.max(1)) <= u64::from(u32::MAX));
            let global = u64::from(groups) * u64::from(local);
            let (bytes, flops) = v.family.family().work(v.name, size, global);
            if v.family == FamilyId::Flops {
                // Saturating, never wrapped: the count only grows with the launch.
                prop_assert_eq!(bytes, global.saturating_mul(8));
                prop_assert_eq!(flops, global.saturating_mul(16 * u64::from(FMA_ITERS)));
            }
        }
    }

    /// Cases proptest once shrank to: sizes at and far past the 32-bit limit with a zero
    /// launch, where counts and group rules once overflowed.
    #[test]
    fn huge_sizes_with_a_zero_launch_count_without_overflow() {
        let cases = [
            (FamilyId::Spmv, "scalar", 4_294_967_294, 2),
            (FamilyId::Bfs, "uniform", 227_737_581_156_908_045, 0),
        ];
        for (family, name, rows, cols) in cases {
            let v = find_variant(family, name).unwrap();
            let size = Size::matrix(rows, cols);
            if v.family.family().check_size(v, size).is_ok() {
                assert!(v.family.family().elements(size) < u64::from(u32::MAX));
            }
            assert!(v.family.family().default_groups(v, size, 0, 0) >= 1);
            let _ = v.family.family().work(v.name, size, 0);
        }
    }

    #[test]
    fn work_counts_saturate_instead_of_wrapping() {
        let huge = Size::matrix(u64::MAX, u64::MAX);
        assert_eq!(
            FamilyId::Matvec.family().work("listing2", huge, 0),
            (u64::MAX, u64::MAX)
        );
        assert_eq!(
            FamilyId::Flops
                .family()
                .work("fma", Size::vector(1), u64::MAX)
                .1,
            u64::MAX
        );
        assert_eq!(
            FamilyId::Bandwidth
                .family()
                .work("copy", Size::vector(u64::MAX / 4), 0)
                .0,
            u64::MAX
        );
    }
}

#[test]
fn a_malformed_matrix_file_names_the_line_the_reader_stopped_in() {
    let head = "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n";
    for (tail, line) in [("2 x 2.0\n", 4), ("2 x 2.0", 4), ("\n2 x 2.0\n", 5)] {
        let text = format!("{head}{tail}");
        let e = matrix::read_mtx(text.as_bytes(), "m.mtx").unwrap_err();
        assert!(
            e.to_string().starts_with(&format!("m.mtx: line {line}:")),
            "{e}"
        );
    }
}

#[test]
fn a_matrix_file_that_cannot_hold_its_declared_entries_is_refused_by_its_size_line() {
    let text = "%%MatrixMarket matrix coordinate real general\n3 3 100\n1 1 1.0\n";
    let e = matrix::read_mtx(text.as_bytes(), "m.mtx").unwrap_err();
    let want = format!(
        "m.mtx: line 2: declares 100 entries, but a file of {} bytes holds at most {}",
        text.len(),
        text.len() / 4
    );
    assert_eq!(e.to_string(), want);
}
