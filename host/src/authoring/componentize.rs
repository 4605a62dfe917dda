//! `sift component`: the two steps every non-Rust toolchain needs around
//! its compiler, so plugin authors need nothing but their compiler and sift.
//!
//! - `bindings c`: wit-bindgen's C bindings for the contract this sift
//!   speaks (the same generator as the `wit-bindgen c` CLI).
//! - `new`: a core module (or WAT) becomes a component of the contract's
//!   world (`predicate-plugin` to 0.2, `plugin` since 0.3; the version
//!   its exports name): the contract is embedded unless the
//!   module carries it already (wit-bindgen's C object file does), and a
//!   module written against WASI preview 1 (wasi-libc, Go's wasip1) is
//!   adapted with the preview-1 reactor adapter of the wasmtime sift links,
//!   so its WASI imports land on what the host provides.

use crate::contract::Version;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use wit_bindgen_core::wit_parser::{Resolve, WorldId};

/// The contract new plugins are written against.
pub const LATEST: &str = Version::LATEST.as_str();

/// The WIT text of contract `version`, or an error naming the known ones.
pub fn contract_wit(version: &str) -> Result<&'static str> {
    Ok(Version::parse(version).map_err(anyhow::Error::msg)?.wit())
}

/// The name core modules import WASI preview 1 under.
const PREVIEW1: &str = "wasi_snapshot_preview1";

/// What `sift component` is asked, as plain data (the command line's
/// subcommands are parsed in the CLI).
#[derive(Clone, Debug)]
pub enum Command {
    /// A core module (.wasm or .wat) at `input` made a plugin component
    /// at `output`.
    New { input: PathBuf, output: PathBuf },
    /// The contract's bindings for `lang`, contract `contract`, in `out`.
    Bindings {
        lang: BindingsLang,
        contract: String,
        out: PathBuf,
    },
}

/// The languages `sift component bindings` writes bindings for.
#[derive(Clone, Copy, Debug)]
pub enum BindingsLang {
    /// wit-bindgen's C generator.
    C,
}

/// Runs one `sift component` step, printing the files written.
pub fn run(command: Command) -> Result<()> {
    match command {
        Command::New { input, output } => {
            let component = new_from_file(&input)?;
            std::fs::write(&output, &component)
                .with_context(|| format!("cannot write {}", output.display()))?;
            println!("wrote {} ({} bytes)", output.display(), component.len());
        }
        Command::Bindings {
            lang,
            contract,
            out,
        } => {
            let written = bindings(lang, &contract, &out)?;
            for file in written {
                println!("wrote {}", file.display());
            }
        }
    }
    Ok(())
}

fn contract(version: &str) -> Result<(Resolve, WorldId)> {
    let version = Version::parse(version).map_err(anyhow::Error::msg)?;
    let mut resolve = Resolve::default();
    let pkg = resolve
        .push_str("predicate.wit", version.wit())
        .context("the embedded contract does not parse")?;
    let world = resolve.select_world(&[pkg], Some(version.world()))?;
    Ok((resolve, world))
}

/// Reads `input` (binary module or WAT) and makes it a plugin component.
pub fn new_from_file(input: &Path) -> Result<Vec<u8>> {
    let bytes = std::fs::read(input).with_context(|| format!("cannot read {}", input.display()))?;
    let module = if bytes.starts_with(b"\0asm") {
        bytes
    } else {
        wat::parse_bytes(&bytes)
            .map_err(|e| {
                anyhow::anyhow!(
                    "{}: not a WebAssembly binary, and not valid WAT text: {e}",
                    input.display()
                )
            })?
            .into_owned()
    };
    new_component(module).with_context(|| format!("{}: cannot make a component", input.display()))
}

/// Makes a plugin component of a core module.
pub fn new_component(mut module: Vec<u8>) -> Result<Vec<u8>> {
    let facts = ModuleFacts::read(&module)?;
    if facts.is_component {
        bail!("this is a component already, not a core module");
    }
    if !facts.has_component_type {
        // The version the module's exports name (0.1.0 when none does).
        let version = facts.contract.as_deref().unwrap_or("0.1.0");
        let (resolve, world) = contract(version)?;
        wit_component::embed_component_metadata(
            &mut module,
            &resolve,
            world,
            wit_component::StringEncoding::UTF8,
        )?;
    }
    let mut encoder = wit_component::ComponentEncoder::default();
    encoder.validate(true).module(&module)?;
    if facts.imports_preview1 {
        encoder.adapter(
            PREVIEW1,
            wasi_preview1_component_adapter_provider::WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER,
        )?;
    }
    encoder.encode()
}

/// What `new` needs to know about a module before encoding it.
struct ModuleFacts {
    is_component: bool,
    has_component_type: bool,
    imports_preview1: bool,
    /// The contract version in the names of its predicate exports.
    contract: Option<String>,
}

impl ModuleFacts {
    fn read(bytes: &[u8]) -> Result<Self> {
        let mut facts = ModuleFacts {
            is_component: false,
            has_component_type: false,
            imports_preview1: false,
            contract: None,
        };
        for payload in wasmparser::Parser::new(0).parse_all(bytes) {
            match payload.context("not a WebAssembly module")? {
                wasmparser::Payload::Version {
                    encoding: wasmparser::Encoding::Component,
                    ..
                } => {
                    facts.is_component = true;
                    break;
                }
                wasmparser::Payload::CustomSection(s) if s.name().starts_with("component-type") => {
                    facts.has_component_type = true;
                }
                wasmparser::Payload::ExportSection(exports) => {
                    for export in exports {
                        let name = export?.name;
                        if let Some(rest) = name.strip_prefix("sift:predicate/predicate@") {
                            let version = rest.split('#').next().unwrap_or(rest);
                            facts.contract.get_or_insert_with(|| version.to_string());
                        }
                    }
                }
                wasmparser::Payload::ImportSection(imports) => {
                    for import in imports.into_imports() {
                        if import?.module == PREVIEW1 {
                            facts.imports_preview1 = true;
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(facts)
    }
}

/// Writes the contract's bindings for `lang` into `out`; returns the files.
pub fn bindings(lang: BindingsLang, version: &str, out: &Path) -> Result<Vec<PathBuf>> {
    let (mut resolve, world) = contract(version)?;
    let mut files = wit_bindgen_core::Files::default();
    match lang {
        BindingsLang::C => {
            wit_bindgen_c::Opts::default()
                .build()
                .generate(&mut resolve, world, &mut files)?
        }
    }
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let mut written = Vec::new();
    for (name, contents) in files.iter() {
        let path = out.join(name);
        std::fs::write(&path, contents)
            .with_context(|| format!("cannot write {}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_contract_this_sift_runs_can_be_built_against() {
        let names: Vec<&str> = Version::ALL.iter().map(|v| v.as_str()).collect();
        assert_eq!(names, crate::contract::SUPPORTED);
        for v in Version::ALL {
            let (resolve, world) = contract(v.as_str()).unwrap();
            assert_eq!(resolve.worlds[world].name, v.world());
        }
        assert_eq!(Version::parse("0.7"), Ok(Version::V0_7));
        assert!(
            contract("0.9.0")
                .unwrap_err()
                .to_string()
                .contains("knows 0.1.0")
        );
        assert_eq!(LATEST, *names.last().unwrap());
    }
}
