//! On-disk cache of compiled components, so a plugin compiles once per
//! (component, engine) pair rather than at every start.
//!
//! An entry is written to a temporary file and renamed into place, and
//! carries a header with the hashes of the component it was compiled from,
//! of the engine settings, and of the artifact itself. An entry whose
//! header does not check out is recompiled, never loaded: deserializing
//! native code is only safe for artifacts this host wrote.

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

const MAGIC: &str = "sift-compiled-component-v1";

#[derive(Serialize, Deserialize)]
struct Header {
    magic: String,
    component_sha256: String,
    engine_hash: String,
    artifact_sha256: String,
}

/// Hex SHA-256 of some bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

pub struct CompileCache {
    dir: PathBuf,
}

impl CompileCache {
    pub fn new(dir: PathBuf) -> CompileCache {
        CompileCache { dir }
    }

    /// The default location: `$SIFT_CACHE_DIR`, else `$XDG_CACHE_HOME/sift`,
    /// else `$HOME/.cache/sift`.
    pub fn default_dir() -> Option<PathBuf> {
        if let Some(d) = std::env::var_os("SIFT_CACHE_DIR") {
            return Some(PathBuf::from(d));
        }
        if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
            return Some(PathBuf::from(d).join("sift"));
        }
        std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache").join("sift"))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn entry_path(&self, component_sha256: &str, engine_hash: &str) -> PathBuf {
        let key = sha256_hex(format!("{component_sha256}:{engine_hash}").as_bytes());
        self.dir.join(format!("{key}.cwasm"))
    }

    /// The cached artifact for this component and engine, if present and
    /// intact.
    pub fn get(&self, component_sha256: &str, engine_hash: &str) -> Option<Vec<u8>> {
        let bytes = std::fs::read(self.entry_path(component_sha256, engine_hash)).ok()?;
        let config = bincode::config::standard();
        let (header, used): (Header, usize) =
            bincode::serde::decode_from_slice(&bytes, config).ok()?;
        let artifact = &bytes[used..];
        let ok = header.magic == MAGIC
            && header.component_sha256 == component_sha256
            && header.engine_hash == engine_hash
            && header.artifact_sha256 == sha256_hex(artifact);
        ok.then(|| artifact.to_vec())
    }

    /// Stores an artifact atomically (temporary file, then rename).
    pub fn put(&self, component_sha256: &str, engine_hash: &str, artifact: &[u8]) -> Result<()> {
        std::fs::create_dir_all(&self.dir)
            .with_context(|| format!("cannot create cache directory {}", self.dir.display()))?;
        let header = Header {
            magic: MAGIC.into(),
            component_sha256: component_sha256.into(),
            engine_hash: engine_hash.into(),
            artifact_sha256: sha256_hex(artifact),
        };
        let mut bytes = bincode::serde::encode_to_vec(&header, bincode::config::standard())?;
        bytes.extend_from_slice(artifact);
        let path = self.entry_path(component_sha256, engine_hash);
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, &bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
        std::fs::rename(&tmp, &path)
            .with_context(|| format!("cannot rename into {}", path.display()))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_and_tamper_detection() {
        let dir = std::env::temp_dir().join(format!("sift-cache-test-{}", std::process::id()));
        let cache = CompileCache::new(dir.clone());
        assert!(cache.get("c", "e").is_none());
        cache.put("c", "e", b"artifact").unwrap();
        assert_eq!(cache.get("c", "e").as_deref(), Some(&b"artifact"[..]));
        assert!(cache.get("c", "other-engine").is_none());
        // Corrupt the artifact: the entry must be refused.
        let path = cache.entry_path("c", "e");
        let mut bytes = std::fs::read(&path).unwrap();
        *bytes.last_mut().unwrap() ^= 0xff;
        std::fs::write(&path, bytes).unwrap();
        assert!(cache.get("c", "e").is_none());
        std::fs::remove_dir_all(dir).ok();
    }
}
