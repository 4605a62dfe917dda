//! Plugin builders by name (Volcano's `RegisterPluginBuilder` and
//! `GetPluginBuilder`). The framework owns the registry and the plugins
//! fill it (`plugins::registry`), so the framework never imports a plugin:
//! the wiring hands the filled registry to the session loop.

use super::plugin::Plugin;
use super::state::State;
use crate::config::batch::PluginOption;

/// Builds a plugin for one session from its snapshot (`PluginBuilder`):
/// drf and proportion start from what the snapshot already holds.
pub type PluginBuilder = fn(&State) -> Box<dyn Plugin>;

/// A plugin of the tiers, with the options that switch its functions.
pub struct Registered {
    pub option: PluginOption,
    pub plugin: Box<dyn Plugin>,
}

#[derive(Default)]
pub struct Registry {
    builders: Vec<(&'static str, PluginBuilder)>,
}

impl Registry {
    pub fn register(&mut self, name: &'static str, builder: PluginBuilder) {
        self.builders.push((name, builder));
    }

    /// Every configured plugin that has a builder, in tier order (a
    /// session's `OnSessionOpen`s). Names without one (`predicates`,
    /// `nodeorder`) only switch sift's own filter and score plugins on.
    pub fn build(&self, tiers: &[Vec<PluginOption>], state: &State) -> Vec<Registered> {
        let mut registered = Vec::new();
        for option in tiers.iter().flatten() {
            if let Some((_, build)) = self.builders.iter().find(|(n, _)| *n == option.name) {
                registered.push(Registered {
                    option: option.clone(),
                    plugin: build(state),
                });
            }
        }
        registered
    }
}
