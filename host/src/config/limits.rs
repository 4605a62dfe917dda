//! What a plugin may use: per-call deadline, memory, and WASI grants.
//! Plain data here; the runtime enforces it.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Per-plugin resource limits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock budget of one call into a plugin.
    pub call_deadline: Duration,
    /// Linear memory one instance may grow to.
    pub memory_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            call_deadline: Duration::from_secs(1),
            memory_bytes: 256 << 20,
        }
    }
}

/// WASI capabilities granted to plugins (none by default).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Grants {
    /// Real wall and monotonic clocks instead of frozen ones (the wall clock
    /// at the Unix epoch, the monotonic clock at 1 ns).
    pub clocks: bool,
    /// Real randomness instead of a fixed sequence.
    pub random: bool,
    /// Plugin stdout/stderr go to the host's stderr instead of nowhere.
    pub stdio: bool,
}

impl<'de> Deserialize<'de> for Grants {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Wire {
            #[serde(default)]
            clocks: bool,
            #[serde(default)]
            random: bool,
            #[serde(default)]
            stdio: bool,
        }
        let w = Wire::deserialize(d)?;
        Ok(Grants {
            clocks: w.clocks,
            random: w.random,
            stdio: w.stdio,
        })
    }
}
