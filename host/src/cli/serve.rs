//! `sift serve`: resolves the configuration, plugins directory and runtime,
//! then hands over to [`crate::serve`].

use super::{PluginSource, load_config, plugins_dir, runtime};
use anyhow::{Result, anyhow};
use std::process::ExitCode;

pub(super) fn serve(a: crate::serve::ServeArgs) -> Result<ExitCode> {
    let config = load_config(a.config.as_deref())?;
    let source = PluginSource {
        config: a.config.clone(),
        plugins_dir: a.plugins_dir.clone(),
        native: false,
    };
    let dir = plugins_dir(&source, &config).ok_or_else(|| {
        anyhow!("no plugins directory: pass --plugins DIR (or set pluginsDir in the config)")
    })?;
    let runtime = runtime(&config)?;
    crate::serve::run(a, runtime, config, dir)?;
    Ok(ExitCode::SUCCESS)
}
