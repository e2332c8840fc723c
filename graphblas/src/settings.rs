//! graphblas's own environment variables (`GBPR_*`), parsed here and nowhere else.
//!
//! What LPF reads (`LPF_ENGINE`, the process settings) is LPF's: the crate asks
//! [`lpf::Config`] for it and never parses an `LPF_*` variable itself. The variables
//! below are graphblas's experiments and diagnostics; [`VARIABLES`] lists them,
//! docs/configuration.md ("graphblas") documents them and a test checks the two agree.
//! As in LPF, an empty variable counts as unset, and an invalid value is an error naming
//! the variable, the value and the values allowed. Every distributed kernel checks them
//! when it loads its input (before any communication), and the command-line programs
//! before they start the job.

/// A variable set to a value it does not allow; the message names the variable, the
/// value and the values allowed. The distributed kernels report it as
/// `DistError::Invalid` with the same message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct InvalidSetting(pub(crate) String);

impl std::fmt::Display for InvalidSetting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InvalidSetting {}

/// One environment variable graphblas reads.
pub struct Variable {
    pub name: &'static str,
    /// The values it takes.
    pub allowed: &'static str,
    /// Its value when unset or empty.
    pub default: &'static str,
    /// What it does.
    pub meaning: &'static str,
    /// A value the parser must refuse.
    pub invalid_example: &'static str,
}

/// Every variable [`Settings::from_lookup`] reads.
pub const VARIABLES: &[Variable] = &[
    Variable {
        name: "GBPR_PROC_ROW_COST",
        allowed: "A or A,B (non-negative integers)",
        default: "12,2",
        meaning: "PageRank's cost of a row with (A) and without (B) in-edges, in edges, when cutting rows into process blocks (experiments)",
        invalid_example: "12,x",
    },
    Variable {
        name: "GBPR_RELABEL",
        allowed: "auto or sparse",
        default: "auto",
        meaning: "how an edge list's ids are relabelled: by a bitmap of the id range when that is small, else by sorting (auto), or always by sorting (sparse; tests)",
        invalid_example: "dense",
    },
    Variable {
        name: "GBPR_DEBUG",
        allowed: "0 or 1",
        default: "0",
        meaning: "every process prints its PageRank and BFS timings and volumes on stderr",
        invalid_example: "yes",
    },
];

/// Cost of a row with at least one in-edge, in edge-equivalents (on top of its
/// edges), when cutting rows into process blocks. Fitted to per-chunk times of the
/// prefetching kernel on kron22 (see `docs/pagerank.md`): ~0.8 ns per gathered
/// edge, ~10 ns per non-empty row (the loop exit mispredicts and its first gathers
/// are the cold ones), ~1.5 ns per empty row.
pub(crate) const PROC_ROW_COST: usize = 12;
/// Cost of a row without in-edges (its rank is the base term), edge-equivalents.
pub(crate) const PROC_EMPTY_ROW_COST: usize = 2;

/// graphblas's settings, typed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Settings {
    /// `GBPR_PROC_ROW_COST`: `(non-empty, empty)` row costs.
    pub(crate) proc_row_costs: (usize, usize),
    /// `GBPR_RELABEL=sparse`: the relabelling always sorts.
    pub(crate) relabel_sparse: bool,
    /// `GBPR_DEBUG=1`.
    pub debug: bool,
}

impl Settings {
    /// The settings the environment gives.
    pub(crate) fn from_env() -> Result<Settings, InvalidSetting> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// The settings `lookup` gives for each variable name.
    pub(crate) fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Settings, InvalidSetting> {
        let get = |name: &str| {
            debug_assert!(VARIABLES.iter().any(|v| v.name == name), "{name} is missing from settings::VARIABLES");
            lookup(name).filter(|v| !v.is_empty())
        };
        // `name`'s value parsed by `parse` (None: invalid), `default` when unset.
        fn parsed<T>(name: &str, value: Option<String>, default: T, parse: impl FnOnce(&str) -> Option<T>) -> Result<T, InvalidSetting> {
            match value {
                None => Ok(default),
                Some(v) => parse(v.trim()).ok_or_else(|| {
                    let allowed = VARIABLES.iter().find(|x| x.name == name).map_or("?", |x| x.allowed);
                    InvalidSetting(format!("{name}={v:?}: expected {allowed}"))
                }),
            }
        }
        let costs = |s: &str| {
            let mut parts = s.split(',').map(|x| x.trim().parse::<usize>().ok());
            match (parts.next().flatten(), parts.next(), parts.next()) {
                (Some(a), None, None) => Some((a, a)),
                (Some(a), Some(Some(b)), None) => Some((a, b)),
                _ => None,
            }
        };
        let pick = |choices: &'static [(&'static str, bool)]| move |s: &str| choices.iter().find(|(n, _)| *n == s).map(|&(_, b)| b);
        Ok(Settings {
            proc_row_costs: parsed("GBPR_PROC_ROW_COST", get("GBPR_PROC_ROW_COST"), (PROC_ROW_COST, PROC_EMPTY_ROW_COST), costs)?,
            relabel_sparse: parsed("GBPR_RELABEL", get("GBPR_RELABEL"), false, pick(&[("auto", false), ("sparse", true)]))?,
            debug: parsed("GBPR_DEBUG", get("GBPR_DEBUG"), false, pick(&[("0", false), ("1", true)]))?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeSet, HashMap};
    use std::path::PathBuf;

    fn settings(pairs: &[(&str, &str)]) -> Result<Settings, InvalidSetting> {
        let map: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Settings::from_lookup(move |k| map.get(k).cloned())
    }

    #[test]
    fn values_parse_to_their_types_and_empty_is_unset() {
        assert_eq!(
            settings(&[]).unwrap(),
            Settings { proc_row_costs: (PROC_ROW_COST, PROC_EMPTY_ROW_COST), relabel_sparse: false, debug: false }
        );
        let s = settings(&[("GBPR_PROC_ROW_COST", " 7, 3 "), ("GBPR_RELABEL", "sparse"), ("GBPR_DEBUG", "1")]).unwrap();
        assert_eq!(s, Settings { proc_row_costs: (7, 3), relabel_sparse: true, debug: true });
        assert_eq!(settings(&[("GBPR_PROC_ROW_COST", "5")]).unwrap().proc_row_costs, (5, 5));
        assert_eq!(settings(&[("GBPR_DEBUG", ""), ("GBPR_RELABEL", "")]).unwrap(), settings(&[]).unwrap());
    }

    #[test]
    fn every_invalid_value_is_an_error_naming_the_variable_and_the_allowed_values() {
        let more = [("GBPR_PROC_ROW_COST", "1,2,3"), ("GBPR_PROC_ROW_COST", "-1"), ("GBPR_PROC_ROW_COST", ","), ("GBPR_DEBUG", "2")];
        let examples = VARIABLES.iter().map(|v| (v.name, v.invalid_example));
        for (name, bad) in examples.chain(more) {
            let e = settings(&[(name, bad)]).expect_err(&format!("{name}={bad:?} accepted")).to_string();
            let allowed = VARIABLES.iter().find(|v| v.name == name).unwrap().allowed;
            assert!(e.contains(&format!("{name}={bad:?}")) && e.contains(allowed), "{e}");
        }
    }

    #[test]
    fn the_parser_reads_every_listed_variable_and_no_other() {
        let asked = std::sync::Mutex::new(BTreeSet::new());
        Settings::from_lookup(|k| {
            asked.lock().unwrap().insert(k.to_string());
            None
        })
        .unwrap();
        let listed: BTreeSet<String> = VARIABLES.iter().map(|v| v.name.to_string()).collect();
        assert_eq!(*asked.lock().unwrap(), listed);
    }

    /// docs/configuration.md's graphblas table is [`VARIABLES`], row for row (on a
    /// mismatch the message shows the rows the code gives).
    #[test]
    fn the_documentation_table_is_the_variables_read() {
        let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/configuration.md")).unwrap();
        let rows: Vec<&str> = doc.lines().filter(|l| l.starts_with("| `GBPR_")).collect();
        let from_code: Vec<String> =
            VARIABLES.iter().map(|v| format!("| `{}` | {} | {} | {} |", v.name, v.allowed, v.default, v.meaning)).collect();
        assert_eq!(rows, from_code, "docs/configuration.md's graphblas table; the code gives:\n{}", from_code.join("\n"));
    }

    /// No source of graphblas or graphblas-pagerank but this one reads a `GBPR_*`
    /// variable, and none reads an `LPF_*` one (LPF's configuration answers for those).
    #[test]
    fn only_this_module_reads_gbpr_variables_and_none_reads_lpf_ones() {
        let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
        let mut offenders = Vec::new();
        let mut dirs = vec![root.join("graphblas/src"), root.join("graphblas-pagerank/src")];
        while let Some(d) = dirs.pop() {
            for entry in std::fs::read_dir(&d).unwrap().flatten() {
                let p = entry.path();
                if p.is_dir() {
                    dirs.push(p);
                } else if p.extension().is_some_and(|e| e == "rs") {
                    let text = std::fs::read_to_string(&p).unwrap();
                    for (i, line) in text.lines().enumerate() {
                        let reads = |prefix: &str| ["env::var(\"", "env::var_os(\""].iter().any(|f| line.contains(&format!("{f}{prefix}")));
                        if reads("LPF_") || (reads("GBPR_") && !p.ends_with("graphblas/src/settings.rs")) {
                            offenders.push(format!("{}:{}", p.display(), i + 1));
                        }
                    }
                }
            }
        }
        assert!(offenders.is_empty(), "environment read outside graphblas/src/settings.rs: {offenders:?}");
    }
}
