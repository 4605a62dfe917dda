//! `sift plugins list|inspect`: what is in a plugins directory, and what
//! one component is.

use super::{PluginSource, load_config, plugins_dir, runtime};
use crate::config::Config;
use crate::contract::{SUPPORTED, WasmPlugin};
use crate::plugins::registry::Catalog;
use crate::text::{printable, printable_truncated};
use anyhow::{Result, anyhow};
use clap::Subcommand;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Subcommand)]
pub(super) enum PluginsCommand {
    /// The plugins in the plugins directory: name, version, size, file.
    List {
        #[command(flatten)]
        source: PluginSource,
    },
    /// What a component is: its name, contract version, imports and
    /// exports, size and compile time; or why it is not a sift plugin.
    Inspect { file: PathBuf },
}

pub(super) fn plugins_list(source: PluginSource) -> Result<ExitCode> {
    let config = load_config(source.config.as_deref())?;
    if source.native {
        for n in crate::plugins::native::builtin() {
            println!("{:20} native", n.name);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let dir = plugins_dir(&source, &config)
        .ok_or_else(|| anyhow!("no plugins directory (pass --plugins DIR)"))?;
    let (catalog, unloadable) =
        Catalog::load_wasm_listing(&runtime(&config)?, Some(&dir), &[], &config)?;
    let enabled: Vec<String> = config
        .filter_plugins()
        .into_iter()
        .map(|p| p.name)
        .collect();
    println!(
        "{:20} {:8} {:12} {:>9} {:8} FILE",
        "NAME", "CONTRACT", "VERSION", "SIZE", "ENABLED"
    );
    for p in catalog.wasm_plugins() {
        let id = p.identity();
        let position = enabled
            .iter()
            .position(|n| *n == id.name)
            .map(|i| format!("#{}", i + 1));
        println!(
            "{:20} {:8} {:12} {:>9} {:8} {}",
            printable(&id.name),
            id.contract.as_str(),
            id.version(),
            human_size(id.size),
            position.unwrap_or_else(|| "no".into()),
            id.path.display()
        );
    }
    if unloadable.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    // One line a file: the reason, never the file's bytes.
    eprintln!(
        "{} file(s) in {} are not loaded:",
        unloadable.len(),
        dir.display()
    );
    for (path, e) in &unloadable {
        let reason = format!("{e:#}");
        let reason = reason
            .strip_prefix(&path.display().to_string())
            .map(|r| r.trim_start_matches([':', ' ']))
            .unwrap_or(&reason);
        eprintln!(
            "  {}: {}",
            path.display(),
            printable_truncated(
                &reason.split_whitespace().collect::<Vec<_>>().join(" "),
                300
            )
        );
    }
    Ok(ExitCode::from(1))
}

pub(super) fn plugins_inspect(file: &Path) -> Result<ExitCode> {
    let config = Config::default();
    let runtime = runtime(&config)?;
    let bytes = crate::runtime::read_component(file)?;
    let compiled = runtime.compile(&bytes, file)?;
    let ty = compiled.component.component_type();
    let engine = runtime.engine();
    println!("file:         {}", file.display());
    println!("size:         {}", human_size(compiled.size));
    println!("sha256:       {}", compiled.sha256);
    println!(
        "compile time: {:.1} ms{}",
        compiled.compile_time.as_secs_f64() * 1e3,
        if compiled.from_cache {
            " (from cache)"
        } else {
            ""
        }
    );
    println!("imports:");
    for (name, _) in ty.imports(engine) {
        println!("  {}", printable(name));
    }
    println!("exports:");
    for (name, _) in ty.exports(engine) {
        println!("  {}", printable(name));
    }
    match WasmPlugin::load(&runtime, file, &|_| "{}".to_string()) {
        Ok(p) => {
            let id = p.identity();
            println!(
                "contract:     sift:predicate/{}@{} (this sift runs {})",
                id.contract.world(),
                id.contract,
                SUPPORTED.join(", ")
            );
            println!("name:         {}", printable(&id.name));
            println!("node fields:  {}", id.node_fields);
            println!("implements:   {}", id.extension_points);
            if !id.pod_annotation_keys.is_empty() {
                println!(
                    "pod annotations read on nodes: {}",
                    id.pod_annotation_keys.join(", ")
                );
            }
            if !id.object_kinds.is_empty() {
                let kinds: Vec<String> = id
                    .object_kinds
                    .iter()
                    .map(|k| {
                        if crate::input::API_OBJECT_KINDS
                            .iter()
                            .any(|(known, _)| known == k)
                        {
                            printable(k).to_string()
                        } else {
                            format!("{} (not a kind this sift reads: never sent)", printable(k))
                        }
                    })
                    .collect();
                println!("objects read: {}", kinds.join(", "));
            }
            println!(
                "cluster view: {}",
                if id.cluster {
                    "yes (pods on every node, namespaces)"
                } else {
                    "no"
                }
            );
            println!(
                "pod object:   {}",
                if id.pod_object {
                    "yes (the whole Pod as JSON)"
                } else {
                    "no"
                }
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            println!(
                "contract:     NOT a sift plugin: {}",
                printable(&format!("{e:#}"))
            );
            Ok(ExitCode::from(1))
        }
    }
}

pub(super) fn human_size(bytes: usize) -> String {
    if bytes >= 1 << 20 {
        format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
    } else {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    }
}
