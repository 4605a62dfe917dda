//! `sift conformance`: case files through full filtering cycles, one line
//! per failing case.

use super::{PluginSource, catalog, load_config};
use crate::conformance;
use anyhow::{Result, bail};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub(super) struct ConformanceArgs {
    /// Case files or directories of them (searched recursively for *.json).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    #[command(flatten)]
    source: PluginSource,
    /// An extra plugin component to load (replaces a bundled plugin of the
    /// same name). Repeatable.
    #[arg(long = "plugin", value_name = "FILE")]
    plugin_files: Vec<PathBuf>,
}

pub(super) fn conformance_cmd(a: ConformanceArgs) -> Result<ExitCode> {
    let config = load_config(a.source.config.as_deref())?;
    let files = conformance::collect_case_files(&a.paths)?;
    if files.is_empty() {
        bail!("no case files (*.json) under the given paths");
    }
    let catalog = catalog(&a.source, &config, &a.plugin_files)?;
    let (mut passed, mut failed) = (0, 0);
    for file in &files {
        let r = conformance::run_case(file, &catalog);
        if r.differences.is_empty() {
            passed += 1;
        } else {
            failed += 1;
            let name = if r.name.is_empty() {
                String::new()
            } else {
                format!(" ({})", r.name)
            };
            println!(
                "FAIL {}{name}: {}",
                r.file.display(),
                r.differences.join("; ")
            );
        }
    }
    println!("{passed} passed, {failed} failed");
    Ok(if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
