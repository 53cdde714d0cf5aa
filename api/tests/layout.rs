//! The api's layers, enforced: each top-level module of `api/src` may name only the modules below
//! it (`crate::<module>`), and the handlers in `routes/` touch neither the database nor the
//! ledger. The table is the one README.md draws.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Each layer and what it may import from the crate, besides itself.
const ALLOWED: &[(&str, &[&str])] = &[
    ("values", &[]),
    ("clock", &[]),
    ("config", &[]),
    ("limits", &[]),
    ("error", &["clock"]),
    ("providers", &["values", "clock"]),
    ("jobs", &["values", "clock"]),
    ("chain", &["jobs", "values", "clock", "error", "providers"]),
    (
        "state",
        &[
            "chain",
            "providers",
            "limits",
            "config",
            "clock",
            "error",
            "values",
        ],
    ),
    (
        "domain",
        &[
            "chain",
            "jobs",
            "providers",
            "limits",
            "state",
            "config",
            "values",
            "error",
            "clock",
        ],
    ),
    (
        "http",
        &["domain", "state", "limits", "values", "error", "clock"],
    ),
    (
        "routes",
        &["domain", "http", "state", "values", "error", "clock"],
    ),
];

/// The composition root may name anything.
const ROOT: &[&str] = &["app", "background", "lib", "main"];

fn src() -> PathBuf {
    // At run time: a target directory shared between checkouts may hold a binary built in another.
    let manifest =
        std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into());
    Path::new(&manifest).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable source tree") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The layer a file belongs to: its first path component under `src`, without `.rs`.
fn layer_of(file: &Path) -> String {
    let relative = file.strip_prefix(src()).expect("under src");
    let first = relative.components().next().expect("a component");
    first
        .as_os_str()
        .to_string_lossy()
        .trim_end_matches(".rs")
        .to_owned()
}

/// The code of a file without its comments (a comment may name anything).
fn code(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `crate::<module>` a file names.
fn crate_modules(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("crate::") {
        let after = &rest[at + "crate::".len()..];
        let name: String = after
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            found.insert(name);
        }
        rest = after;
    }
    found
}

#[test]
fn each_layer_names_only_the_layers_below_it() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    assert!(
        files.len() > 50,
        "the source tree was found: {}",
        files.len()
    );
    let mut violations = Vec::new();
    for file in &files {
        let layer = layer_of(file);
        if ROOT.contains(&layer.as_str()) {
            continue;
        }
        let allowed = ALLOWED
            .iter()
            .find(|(name, _)| *name == layer)
            .unwrap_or_else(|| panic!("{} is in no layer of the table", file.display()))
            .1;
        let text = code(&std::fs::read_to_string(file).unwrap());
        for module in crate_modules(&text) {
            if module != layer && !allowed.contains(&module.as_str()) {
                violations.push(format!("{} names crate::{module}", file.display()));
            }
        }
    }
    assert!(violations.is_empty(), "{violations:#?}");
}

#[test]
fn handlers_touch_neither_the_database_nor_the_ledger() {
    let mut files = Vec::new();
    rust_files(&src().join("routes"), &mut files);
    assert!(!files.is_empty());
    let mut violations = Vec::new();
    for file in &files {
        let text = code(&std::fs::read_to_string(file).unwrap());
        // Store rows may be shaped into responses; queries need sea_orm, which routes never name.
        for forbidden in [
            "sea_orm",
            "sqlx",
            "narrative_store::Store",
            "narrative_store::indexed",
            ".store.",
            ".chain.",
            "ledger",
            "narrative_sdk::pda",
        ] {
            if text.contains(forbidden) {
                violations.push(format!("{} uses {forbidden}", file.display()));
            }
        }
    }
    assert!(violations.is_empty(), "{violations:#?}");
}

#[test]
fn the_scan_sees_what_it_forbids() {
    // The scanner itself: a comment names nothing, code does.
    assert!(crate_modules(&code("use crate::domain::keys; // crate::chain")).contains("domain"));
    assert!(!crate_modules(&code("// crate::chain::confirm")).contains("chain"));
    assert_eq!(
        crate_modules("crate::values::Wallet, crate::error::ApiError"),
        BTreeSet::from(["values".to_owned(), "error".to_owned()])
    );
}
