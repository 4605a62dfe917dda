//! Printing cycle outcomes for people (a table) and for programs (JSON).

use crate::engine::CycleOutcome;
use crate::text::printable;
use std::borrow::Cow;
use std::fmt::Write;

/// A human-readable report of one cycle; `limit` caps the rows per list
/// (0 = no cap).
pub fn table(o: &CycleOutcome, limit: usize) -> String {
    let mut s = String::new();
    let cap = |n: usize| if limit == 0 { n } else { n.min(limit) };
    let _ = writeln!(
        s,
        "pod {}: {} feasible node(s); evaluated {} of {} (numFeasibleNodesToFind {}), next start index {}",
        printable(&o.pod),
        o.feasible.len(),
        o.nodes_evaluated,
        o.num_all_nodes,
        o.num_feasible_nodes_to_find,
        o.next_start_node_index
    );
    if let Some(e) = &o.error {
        let _ = writeln!(s, "error: {}", printable(e));
    }
    for e in &o.ignored_errors {
        let _ = writeln!(s, "ignored error: {}", printable(e));
    }
    if !o.feasible.is_empty() {
        let shown = cap(o.feasible.len());
        let names: Vec<Cow<str>> = o
            .feasible_nodes()
            .take(shown)
            .map(|n| printable(n))
            .collect();
        let _ = write!(s, "feasible: {}", names.join(", "));
        if shown < o.feasible.len() {
            let _ = write!(s, ", ... ({} more)", o.feasible.len() - shown);
        }
        s.push('\n');
    }
    if !o.rejected.is_empty() {
        let mut rows: Vec<(&str, &crate::engine::diagnosis::NodeStatus)> =
            o.statuses().map(|(n, st)| (&**n, st)).collect();
        rows.sort_by(|a, b| a.0.cmp(b.0));
        rows.truncate(cap(rows.len()));
        // Names and reasons come from input files and plugins: escaped, so
        // none can break the table or drive the terminal.
        let rows: Vec<(Cow<str>, &str, Cow<str>, String)> = rows
            .into_iter()
            .map(|(n, st)| {
                (
                    printable(n),
                    st.code().as_str(),
                    printable(st.plugin().unwrap_or("-")),
                    printable(&st.reasons().join("; ")).into_owned(),
                )
            })
            .collect();
        let w_node = rows.iter().map(|r| r.0.len()).max().unwrap_or(4).max(4);
        let w_code = rows.iter().map(|r| r.1.len()).max().unwrap_or(4).max(4);
        let w_plugin = rows.iter().map(|r| r.2.len()).max().unwrap_or(6).max(6);
        let _ = writeln!(
            s,
            "{:w_node$}  {:w_code$}  {:w_plugin$}  REASONS",
            "NODE", "CODE", "PLUGIN"
        );
        for (node, code, plugin, reasons) in &rows {
            let _ = writeln!(
                s,
                "{node:w_node$}  {code:w_code$}  {plugin:w_plugin$}  {reasons}"
            );
        }
        if rows.len() < o.rejected.len() {
            let _ = writeln!(
                s,
                "... {} more rejected node(s) (use --limit 0 or -o json)",
                o.rejected.len() - rows.len()
            );
        }
    }
    if let Some(m) = &o.message {
        let _ = writeln!(s, "message: {}", printable(m));
    }
    s
}
