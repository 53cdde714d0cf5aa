//! The api's layers, enforced: each top-level module of `api/src` may name only the modules below
//! it (`crate::<module>`), and the handlers in `routes/` touch neither the database nor the
//! ledger. The table is the one docs/decisions.md ("API layout") describes.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Each layer and what it may import from the crate, besides itself.
const ALLOWED: &[(&str, &[&str])] = &[
    ("values", &[]),
    ("clock", &[]),
    ("config", &[]),
    ("limits", &[]),
    ("freshness", &[]),
    ("error", &["clock"]),
    ("providers", &["values", "clock"]),
    ("jobs", &["values", "clock"]),
    (
        "chain",
        &["jobs", "values", "clock", "error", "providers", "freshness"],
    ),
    (
        "state",
        &[
            "chain",
            "providers",
            "limits",
            "freshness",
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
            "freshness",
            "state",
            "config",
            "values",
            "error",
            "clock",
        ],
    ),
    (
        "http",
        &[
            "domain",
            "state",
            "limits",
            "freshness",
            "values",
            "error",
            "clock",
        ],
    ),
    (
        "routes",
        &["domain", "http", "state", "values", "error", "clock"],
    ),
];

/// The composition roots may name anything: the service's and the operator tools' in `bin/`.
const ROOT: &[&str] = &["app", "background", "lib", "main", "bin"];

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

/// The code of a file without its comments (a comment may name anything). `//` inside a string
/// literal (`"https://…"`) is not a comment.
fn code(text: &str) -> String {
    text.lines()
        .map(|line| {
            let mut in_string = false;
            let mut escaped = false;
            let bytes = line.as_bytes();
            for (at, &byte) in bytes.iter().enumerate() {
                match byte {
                    _ if escaped => escaped = false,
                    b'\\' if in_string => escaped = true,
                    b'"' => in_string = !in_string,
                    b'/' if !in_string && bytes.get(at + 1) == Some(&b'/') => return &line[..at],
                    _ => {}
                }
            }
            line
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The identifier at the start of `text`.
fn identifier(text: &str) -> String {
    text.trim_start()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// The first identifier of each item of a `{a::b, c, d::{e, f}}` group that starts `text`.
fn group_heads(text: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut item_start = true;
    for (at, c) in text.char_indices() {
        match c {
            '{' => {
                depth += 1;
                if depth == 1 {
                    item_start = true;
                    continue;
                }
            }
            '}' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            ',' if depth == 1 => {
                item_start = true;
                continue;
            }
            _ => {}
        }
        if item_start && depth == 1 && !c.is_whitespace() {
            heads.push(identifier(&text[at..]));
            item_start = false;
        }
    }
    heads.retain(|h| !h.is_empty() && h != "self");
    heads
}

/// Every top-level module a file names: `crate::<module>`, each head of `crate::{…}`, and
/// `super::…::<module>` that climbs `depth` levels (the file's module depth) to the crate root.
fn crate_modules_at(text: &str, depth: usize) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let named_after = |after: &str, found: &mut BTreeSet<String>| {
        if after.trim_start().starts_with('{') {
            found.extend(group_heads(after.trim_start()));
        } else {
            let name = identifier(after);
            if !name.is_empty() {
                found.insert(name);
            }
        }
    };
    let mut rest = text;
    while let Some(at) = rest.find("crate::") {
        let after = &rest[at + "crate::".len()..];
        named_after(after, &mut found);
        rest = after;
    }
    if depth > 0 {
        let climb = "super::".repeat(depth);
        let mut rest = text;
        while let Some(at) = rest.find(&climb) {
            let after = &rest[at + climb.len()..];
            // `super::` once more climbs out of the crate, which does not compile.
            if !after.starts_with("super::") {
                named_after(after, &mut found);
            }
            rest = after;
        }
    }
    found
}

fn crate_modules(text: &str) -> BTreeSet<String> {
    crate_modules_at(text, 0)
}

/// How many `super::` a file climbs to reach the crate root: its module's depth below `src`
/// (`domain/narratives/feed.rs` is `domain::narratives::feed`, 3; a `mod.rs` is its folder).
fn module_depth(file: &Path) -> usize {
    let relative = file.strip_prefix(src()).expect("under src");
    let components = relative.components().count();
    if file.file_name().is_some_and(|n| n == "mod.rs") {
        components - 1
    } else {
        components
    }
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
        for module in crate_modules_at(&text, module_depth(file)) {
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

/// A file's text before its test module (`#[cfg(test)]` on a `mod`). A test-only item elsewhere
/// (a helper under `#[cfg(test)]` among the service's code) does not end the service's part.
fn before_test_module(text: &str) -> &str {
    let mut at = 0;
    while let Some(found) = text[at..].find("#[cfg(test)]") {
        let start = at + found;
        let after = &text[start + "#[cfg(test)]".len()..];
        if after.trim_start().starts_with("mod ") {
            return &text[..start];
        }
        at = start + 1;
    }
    text
}

#[test]
fn addresses_are_derived_through_the_one_search() {
    // `narrative_sdk::derive` tests the curve in half the time of Solana's search and gives the
    // same addresses; the service's and the sdk's code call it, and only tests call Solana's,
    // to compare.
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    rust_files(&src().join("../../sdk/src"), &mut files);
    assert!(
        files.iter().any(|f| f.ends_with("sdk/src/pda.rs")),
        "the sdk's sources are scanned"
    );
    let mut violations = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        if code(before_test_module(&text)).contains("Pubkey::find_program_address") {
            violations.push(file.display().to_string());
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
    // A string holding `//` does not hide the rest of its line.
    assert!(
        crate_modules(&code(r#"let u = "https://x"; use crate::chain::Chain;"#)).contains("chain")
    );
    // Grouped imports name each head.
    assert_eq!(
        crate_modules("use crate::{chain::confirm, values::{Wallet, Sol}, self};"),
        BTreeSet::from(["chain".to_owned(), "values".to_owned()])
    );
    // `super::` up to the crate root names a top-level module; fewer stay inside the layer.
    let in_domain_area = "use super::super::super::chain::Chain; use super::super::keys;";
    assert_eq!(
        crate_modules_at(in_domain_area, 3),
        BTreeSet::from(["chain".to_owned()])
    );
    assert_eq!(
        crate_modules_at("use super::super::{http::x, routes::y};", 2),
        BTreeSet::from(["http".to_owned(), "routes".to_owned()])
    );
    assert!(crate_modules_at("use super::feed;", 3).is_empty());
    // A test-only helper among the service's code does not hide what follows it; the test
    // module does.
    let file = "fn a() {}\n#[cfg(test)]\nfn helper() {}\nfn b() {}\n#[cfg(test)]\nmod tests {}\n";
    assert_eq!(
        before_test_module(file),
        "fn a() {}\n#[cfg(test)]\nfn helper() {}\nfn b() {}\n"
    );
    assert_eq!(before_test_module("fn a() {}\n"), "fn a() {}\n");
}
