//! docs/design.md's "Public API" list is the crate's public surface, both ways: every
//! name it lists is public in the code, and every public item of the crate root and of
//! the public modules is listed. A new public item must be listed there (or made
//! `pub(crate)`); a name dropped from the code must leave the list.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The list: "crate root" and each module name, with the names given for it.
fn documented() -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let design = read(&root.join("docs/design.md"));
    let section = design.split("\n## Public API\n").nth(1).expect("docs/design.md has a \"## Public API\" section");
    let section = section.split("\n## ").next().unwrap();
    let mut list = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in section.lines() {
        let item = if let Some(rest) = line.strip_prefix("- ") {
            let (head, names) = rest.split_once(':').expect("a list entry is `- module: names`");
            let module = if head == "crate root" { head.to_string() } else { head.split('`').nth(1).unwrap().to_string() };
            current = Some(module);
            names
        } else if line.starts_with("  ") && current.is_some() {
            line
        } else {
            current = None;
            continue;
        };
        let names = list.entry(current.clone().unwrap()).or_insert_with(BTreeSet::new);
        names.extend(item.split('`').skip(1).step_by(2).map(String::from));
    }
    list
}

/// The public items a file defines or re-exports at its top level (not inside an
/// `impl`): `pub fn|struct|enum|trait|type|const|static NAME`, `pub use ..::{A, B}`,
/// and separately its `pub mod`s.
fn public_items(text: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let (mut items, mut modules) = (BTreeSet::new(), BTreeSet::new());
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("pub ") else { continue };
        let rest = rest.trim_start_matches("unsafe ");
        let rest = rest.strip_prefix("const fn ").map_or(rest, |f| &rest[rest.len() - f.len() - "fn ".len()..]);
        let mut words = rest.split(|c: char| !(c.is_alphanumeric() || c == '_'));
        let Some(kind) = words.next() else { continue };
        match kind {
            "mod" => {
                modules.insert(words.next().unwrap().to_string());
            }
            "use" => {
                let path = rest["use ".len()..].trim_end_matches(';');
                let names = match path.split_once('{') {
                    Some((_, group)) => group.trim_end_matches('}').split(',').map(|s| s.trim().to_string()).collect(),
                    None => vec![path.rsplit("::").next().unwrap().to_string()],
                };
                items.extend(names.into_iter().filter(|n| !n.is_empty()));
            }
            "fn" | "struct" | "enum" | "trait" | "type" | "const" | "static" => {
                items.insert(words.find(|w| !w.is_empty()).unwrap().to_string());
            }
            _ => {}
        }
    }
    (items, modules)
}

fn module_file(src: &Path, module: &str) -> std::path::PathBuf {
    let flat = src.join(format!("{module}.rs"));
    if flat.exists() { flat } else { src.join(module).join("mod.rs") }
}

#[test]
fn the_documented_public_api_is_the_public_api() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let list = documented();
    let (root_items, root_modules) = public_items(&read(&src.join("lib.rs")));
    let mut mismatches = Vec::new();
    let mut compare = |what: &str, listed: &BTreeSet<String>, code: &BTreeSet<String>| {
        for missing in code.difference(listed) {
            mismatches.push(format!("{what}: `{missing}` is public but not in docs/design.md's list"));
        }
        for gone in listed.difference(code) {
            mismatches.push(format!("{what}: docs/design.md lists `{gone}`, which is not public in the code"));
        }
    };
    compare("crate root", &list["crate root"], &root_items);
    let listed_modules: BTreeSet<String> = list.keys().filter(|k| *k != "crate root").cloned().collect();
    compare("public modules", &listed_modules, &root_modules);
    for module in root_modules.intersection(&listed_modules) {
        let (items, _) = public_items(&read(&module_file(&src, module)));
        compare(module, &list[module], &items);
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

#[test]
fn the_item_reader_sees_each_form() {
    let (items, modules) = public_items(
        "pub mod a;\npub use x::{B, C};\npub use y::D;\npub const fn e() {}\npub(crate) fn f() {}\n    pub fn g() {}\npub struct H<T>;\n",
    );
    assert_eq!(items, ["B", "C", "D", "H", "e"].into_iter().map(String::from).collect());
    assert_eq!(modules, ["a".to_string()].into_iter().collect());
}
