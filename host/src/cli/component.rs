//! `sift component`: its subcommands (clap), converted to
//! [`crate::authoring::componentize::Command`].

use crate::authoring::componentize::{self, BindingsLang, LATEST};
use anyhow::Result;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Subcommand)]
pub enum ComponentCommand {
    /// Turn a core module (.wasm) or WebAssembly text (.wat) into a plugin
    /// component.
    ///
    /// Embeds the contract's type information unless the module has it
    /// already (wit-bindgen's C object file adds it at link time), and
    /// adapts WASI preview-1 imports (wasi-libc, Go's wasip1) with the
    /// reactor adapter matching sift's wasmtime. Check the result with
    /// `sift plugins inspect OUT` and `sift conformance --plugin OUT CASES`.
    New {
        /// The core module: a .wasm file or a .wat text.
        input: PathBuf,
        /// Where to write the component.
        #[arg(long, short = 'o')]
        output: PathBuf,
    },
    /// Write the contract's bindings for a language into a directory.
    ///
    /// C: the world's header, source and component-type object (link it
    /// in: it carries the contract's types), as `wit-bindgen c` would
    /// write them: plugin.h, plugin.c and plugin_component_type.o for
    /// contract 0.3 and later (world plugin), predicate_plugin.* for 0.1
    /// and 0.2 (world predicate-plugin).
    Bindings {
        #[arg(value_enum)]
        lang: BindingsLangArg,
        /// The contract version to write bindings for: any this sift runs
        /// (another is refused, naming them), by default the latest.
        #[arg(long, default_value = LATEST)]
        contract: String,
        /// Directory to write into (created if missing).
        #[arg(long, default_value = ".")]
        out: PathBuf,
    },
}

/// `bindings`' languages; the variant docs are `--help`'s descriptions.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum BindingsLangArg {
    /// wit-bindgen's C generator.
    C,
}

impl From<ComponentCommand> for componentize::Command {
    fn from(c: ComponentCommand) -> componentize::Command {
        match c {
            ComponentCommand::New { input, output } => componentize::Command::New { input, output },
            ComponentCommand::Bindings {
                lang,
                contract,
                out,
            } => componentize::Command::Bindings {
                lang: match lang {
                    BindingsLangArg::C => BindingsLang::C,
                },
                contract,
                out,
            },
        }
    }
}

pub(super) fn component(c: ComponentCommand) -> Result<ExitCode> {
    componentize::run(c.into()).map(|_| ExitCode::SUCCESS)
}
