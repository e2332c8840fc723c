//! The layer check shared by the crates' `tests/layers.rs` (lpf, lpf-jni, graphblas):
//! each room of a crate's `src/` (a file, or a folder with all its files) has a layer,
//! and every path a file names in code (`crate::a::b`, `super::x`, a child module's
//! `x::`) must lead to a room of a lower layer. Comments and `#[cfg(test)]` modules are
//! not read (tests may use any layer). Inside a folder, `mod.rs` and its files may name
//! each other: a folder is one room, as `farm-studio look` draws it.

use std::collections::BTreeMap;
use std::path::Path;

/// Rooms and their layers, lowest first; rooms of one layer do not name each other.
pub type Layers = &'static [(u32, &'static [&'static str])];

/// The room of a file: its folder (`tcp/`) or itself (`context.rs`).
fn room_of(file: &str) -> String {
    match file.split_once('/') {
        Some((folder, _)) => format!("{folder}/"),
        None => file.to_string(),
    }
}

/// The files of `src/` as paths relative to it, the folders `skip` aside.
fn source_files(dir: &Path, rel: &str, skip: &[&str], out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().into_string().unwrap();
        let path = if rel.is_empty() { name.clone() } else { format!("{rel}/{name}") };
        if entry.file_type().unwrap().is_dir() {
            if !skip.contains(&path.as_str()) {
                source_files(&entry.path(), &path, skip, out);
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

/// The module path of a file: `tcp/mod.rs` -> ["tcp"], `tcp/mesh.rs` -> ["tcp", "mesh"].
fn module_of(file: &str) -> Vec<String> {
    let mut parts: Vec<String> = file.trim_end_matches(".rs").split('/').map(String::from).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// The file that defines the longest prefix of module path `path`, if one is a file of
/// the crate (`crate::tcp::mesh::Link` -> `tcp/mesh.rs`; `crate::Error` -> `lib.rs`).
fn file_of(path: &[String], files: &BTreeMap<Vec<String>, String>) -> Option<String> {
    (0..=path.len()).rev().find_map(|n| files.get(&path[..n]).cloned())
}

/// The code of a file without comments and without its `#[cfg(test)]` modules (tests
/// may use any layer).
fn code_of(text: &str) -> String {
    let mut code = String::new();
    let mut in_block = 0usize;
    // Inside a `#[cfg(test)] mod x { .. }`: the depth of braces still open.
    let mut test_depth: Option<i64> = None;
    let mut after_cfg_test = false;
    for line in text.lines() {
        let mut rest = line;
        let mut kept = String::new();
        loop {
            if in_block > 0 {
                match rest.find("*/") {
                    Some(i) => {
                        in_block -= 1;
                        rest = &rest[i + 2..];
                    }
                    None => break,
                }
            } else if let Some(i) = rest.find("/*") {
                let line_comment = rest.find("//").filter(|&j| j < i);
                kept.push_str(&rest[..line_comment.unwrap_or(i)]);
                if line_comment.is_some() {
                    break;
                }
                in_block += 1;
                rest = &rest[i + 2..];
            } else {
                kept.push_str(&rest[..rest.find("//").unwrap_or(rest.len())]);
                break;
            }
        }
        let trimmed = kept.trim();
        if test_depth.is_none() && after_cfg_test && trimmed.contains("mod ") && trimmed.ends_with('{') {
            test_depth = Some(0);
        }
        after_cfg_test = trimmed == "#[cfg(test)]" || (after_cfg_test && trimmed.starts_with("#["));
        if let Some(depth) = test_depth.as_mut() {
            *depth += kept.matches('{').count() as i64 - kept.matches('}').count() as i64;
            if *depth <= 0 {
                test_depth = None;
            }
            kept.clear();
        }
        code.push_str(&kept);
        code.push('\n');
    }
    code
}

/// Every module path named in `code` of the file with module path `me`, with its line:
/// `crate::a::b`, `super::a` (from the file's module or an inline `mod x { .. }` in it)
/// and `child::a` (a child module of this file's module).
fn named_paths(code: &str, me: &[String], files: &BTreeMap<Vec<String>, String>) -> Vec<(usize, Vec<String>)> {
    let mut out = Vec::new();
    // The inline modules the current line is in, each with the brace depth it opened at.
    let mut inline: Vec<(String, i64)> = Vec::new();
    let mut depth = 0i64;
    for (n, line) in code.lines().enumerate() {
        let mut module = me.to_vec();
        module.extend(inline.iter().map(|(name, _)| name.clone()));
        let bytes = line.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let starts_word = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_' || bytes[i - 1] == b':');
            if !starts_word || !(bytes[i].is_ascii_alphabetic() || bytes[i] == b'_') {
                i += 1;
                continue;
            }
            let end = (i..bytes.len()).find(|&j| !(bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_' || bytes[j] == b':')).unwrap_or(bytes.len());
            let word = &line[i..end];
            let segments: Vec<String> = word.split("::").filter(|s| !s.is_empty()).map(String::from).collect();
            i = end;
            // `a::b` names b in a; `a::{b, c}` and `a::*` name a itself.
            if segments.len() < 2 && !(word.ends_with("::") && !segments.is_empty()) {
                continue;
            }
            let supers = segments.iter().take_while(|s| *s == "super").count();
            let (base, rest) = match segments[0].as_str() {
                "crate" => (Vec::new(), &segments[1..]),
                "super" => (module[..module.len().saturating_sub(supers)].to_vec(), &segments[supers..]),
                "self" => (module.clone(), &segments[1..]),
                child => {
                    let mut m = module.clone();
                    m.push(child.to_string());
                    if !files.contains_key(&m) {
                        continue;
                    }
                    (module.clone(), &segments[..])
                }
            };
            let mut path = base;
            path.extend(rest.iter().cloned());
            out.push((n + 1, path));
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        if let Some(at) = words.iter().position(|w| *w == "mod") {
            if words.get(at + 2) == Some(&"{") {
                inline.push((words[at + 1].to_string(), depth));
            }
        }
        depth += line.matches('{').count() as i64 - line.matches('}').count() as i64;
        while inline.last().is_some_and(|&(_, opened)| depth <= opened) {
            inline.pop();
        }
    }
    out
}

/// Fails, listing them, if any import of the crate at `manifest_dir` (its `src/`, the
/// folders `skip` aside) does not run downward ([`imports_not_downward`]).
pub fn assert_imports_run_downward(manifest_dir: &str, layers: Layers, skip: &[&str]) {
    let upward = imports_not_downward(&Path::new(manifest_dir).join("src"), layers, skip);
    assert!(upward.is_empty(), "imports that do not run downward:\n{}", upward.join("\n"));
}

/// Every import of `src` (skipping the folders `skip`, e.g. the binaries, which use only
/// the public API) that does not run downward, as "file:line (layer) names path in
/// file (layer)"; panics when a room has no layer or `layers` names a room that is gone.
fn imports_not_downward(src: &Path, layers: Layers, skip: &[&str]) -> Vec<String> {
    let mut sources = Vec::new();
    source_files(src, "", skip, &mut sources);
    let layer: BTreeMap<&str, u32> = layers.iter().flat_map(|&(l, rooms)| rooms.iter().map(move |&r| (r, l))).collect();
    let unplaced: Vec<&String> = sources.iter().filter(|f| !layer.contains_key(room_of(f).as_str())).collect();
    assert!(unplaced.is_empty(), "files whose room has no layer in the crate's tests/layers.rs: {unplaced:?}");
    let gone: Vec<&&str> = layer.keys().filter(|r| !sources.iter().any(|f| room_of(f) == **r)).collect();
    assert!(gone.is_empty(), "LAYERS names rooms that do not exist: {gone:?}");

    let files: BTreeMap<Vec<String>, String> = sources.iter().map(|f| (module_of(f), f.clone())).collect();
    let mut upward = Vec::new();
    for file in &sources {
        let text = std::fs::read_to_string(src.join(file)).unwrap();
        let me = module_of(file);
        for (line, path) in named_paths(&code_of(&text), &me, &files) {
            let Some(target) = file_of(&path, &files) else { continue };
            let (from, to) = (room_of(file), room_of(&target));
            if from != to && layer[to.as_str()] >= layer[from.as_str()] {
                upward.push(format!(
                    "src/{file}:{line} (layer {}) names {} in src/{target} (layer {})",
                    layer[from.as_str()],
                    path.join("::"),
                    layer[to.as_str()]
                ));
            }
        }
    }
    upward
}

/// The checker sees each kind of path it must: a test of the test, on a made-up crate
/// (each crate that includes this module runs it).
#[test]
fn the_checker_finds_crate_super_and_child_paths() {
    let files: BTreeMap<Vec<String>, String> = ["lib.rs", "a.rs", "b/mod.rs", "b/c.rs"]
        .iter()
        .map(|f| (module_of(f), f.to_string()))
        .collect();
    let code = code_of(
        "use crate::a::X; // crate::b\nfn f() { super::b::Y; c::Z; /* crate::b */ }\nuse crate::{a};\n\
         #[cfg(test)]\nmod tests {\n    use crate::b::c::Q;\n    fn g() {}\n}\n",
    );
    let found = named_paths(&code, &module_of("b/mod.rs"), &files);
    let targets: Vec<(usize, String)> = found.iter().map(|(l, p)| (*l, file_of(p, &files).unwrap())).collect();
    assert_eq!(targets, [(1, "a.rs".to_string()), (2, "b/mod.rs".to_string()), (2, "b/c.rs".to_string()), (3, "lib.rs".to_string())]);
    let from_leaf = named_paths("use super::c::W;\n", &module_of("b/c.rs"), &files);
    assert_eq!(file_of(&from_leaf[0].1, &files).unwrap(), "b/c.rs");
    // Inside an inline module, `super` is the file's own module.
    let inline = named_paths("mod inner {\n    use super::W;\n}\nuse super::V;\n", &module_of("b/c.rs"), &files);
    let targets: Vec<String> = inline.iter().map(|(_, p)| file_of(p, &files).unwrap()).collect();
    assert_eq!(targets, ["b/c.rs", "b/mod.rs"]);
}
