//! The in-tree volume plugins `k8s.io/csi-translation-lib` (v0.36) knows,
//! and how it names each one's volumes as a CSI driver's: the driver and
//! the volume handle NodeVolumeLimits counts a migrated volume under.
//!
//! Restated from `translate.go` and `plugins/*.go` of the library, not
//! copied: which source each plugin reads (`CanSupport`,
//! `CanSupportInline`), its CSI driver (`GetCSINameFromInTreeName`), and
//! the volume handle of `TranslateInTreePVToCSI` and
//! `TranslateInTreeInlineVolumeToCSI`, with their errors. Only the handle
//! is computed: topology, access modes and attributes do not concern the
//! count (and `translateTopologyFromInTreeToCSI` never fails).

use serde_json::Value;

/// One in-tree volume plugin the translation library migrates.
#[derive(Debug, PartialEq, Eq)]
pub struct InTree {
    /// e.g. `kubernetes.io/aws-ebs` (a StorageClass's provisioner).
    pub plugin: &'static str,
    /// The CSI driver that supersedes it, e.g. `ebs.csi.aws.com`.
    pub driver: &'static str,
    /// The volume source it reads, in a pod's volume and in a PV's spec.
    pub source: &'static str,
}

pub const AWS_EBS: &str = "kubernetes.io/aws-ebs";
pub const GCE_PD: &str = "kubernetes.io/gce-pd";
pub const CINDER: &str = "kubernetes.io/cinder";
pub const AZURE_DISK: &str = "kubernetes.io/azure-disk";
pub const AZURE_FILE: &str = "kubernetes.io/azure-file";
pub const VSPHERE: &str = "kubernetes.io/vsphere-volume";
pub const PORTWORX: &str = "kubernetes.io/portworx-volume";

/// The library's `inTreePlugins`. Upstream keeps them in a Go map, whose
/// order is random; a valid volume has one source, so order does not
/// matter.
pub const IN_TREE: [InTree; 7] = [
    InTree {
        plugin: GCE_PD,
        driver: "pd.csi.storage.gke.io",
        source: "gcePersistentDisk",
    },
    InTree {
        plugin: AWS_EBS,
        driver: "ebs.csi.aws.com",
        source: "awsElasticBlockStore",
    },
    InTree {
        plugin: CINDER,
        driver: "cinder.csi.openstack.org",
        source: "cinder",
    },
    InTree {
        plugin: AZURE_DISK,
        driver: "disk.csi.azure.com",
        source: "azureDisk",
    },
    InTree {
        plugin: AZURE_FILE,
        driver: "file.csi.azure.com",
        source: "azureFile",
    },
    InTree {
        plugin: VSPHERE,
        driver: "csi.vsphere.vmware.com",
        source: "vsphereVolume",
    },
    InTree {
        plugin: PORTWORX,
        driver: "pxd.portworx.com",
        source: "portworxVolume",
    },
];

/// NodeVolumeLimits' `isCSIMigrationOn`: the in-tree plugins whose volumes
/// it counts as their CSI driver's. The migrations of these five are GA
/// and always on (their feature gates are gone); Azure File and vSphere
/// are translatable but not in the list, so their volumes are not counted.
pub fn migration_on(plugin: &str) -> bool {
    matches!(plugin, AWS_EBS | PORTWORX | GCE_PD | AZURE_DISK | CINDER)
}

/// The plugin named `plugin` (`IsMigratableIntreePluginByName`).
pub fn by_name(plugin: &str) -> Option<&'static InTree> {
    IN_TREE.iter().find(|p| p.plugin == plugin)
}

fn has(v: &Value, key: &str) -> bool {
    v.get(key).is_some_and(|s| !s.is_null())
}

/// The plugin that reads this volume (a pod's `spec.volumes[]` entry, or a
/// PV's `spec`): `CanSupportInline` / `CanSupport`.
pub fn plugin_of(volume_or_spec: &Value) -> Option<&'static InTree> {
    IN_TREE.iter().find(|p| has(volume_or_spec, p.source))
}

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The handle of an in-line volume (`TranslateInTreeInlineVolumeToCSI`),
/// or the library's error.
pub fn inline_handle(p: &InTree, volume: &Value) -> Result<String, String> {
    let source = &volume[p.source];
    match p.plugin {
        AWS_EBS => ebs_volume_id(text(source, "volumeID"))
            .map_err(|e| format!("failed to translate Kubernetes ID to EBS Volume ID {e}")),
        GCE_PD => Ok(format!(
            "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/{}",
            text(source, "pdName")
        )),
        AZURE_DISK => {
            azure_disk_managed(source)?;
            Ok(text(source, "diskURI").to_string())
        }
        CINDER | PORTWORX => Ok(text(source, "volumeID").to_string()),
        // Azure File and vSphere are never translated here: their
        // migration is off (`migration_on`).
        _ => Err(format!("no handle for {}", p.plugin)),
    }
}

/// The handle of a PV's in-tree source (`TranslateInTreePVToCSI`), or the
/// library's error (upstream then does not count the volume).
pub fn pv_handle(p: &InTree, pv: &Value) -> Result<String, String> {
    let source = &pv["spec"][p.source];
    match p.plugin {
        AWS_EBS => ebs_volume_id(text(source, "volumeID"))
            .map_err(|e| format!("failed to translate Kubernetes ID to EBS Volume ID {e}")),
        GCE_PD => {
            let labels = &pv["metadata"]["labels"];
            let mut zones = text(labels, "failure-domain.beta.kubernetes.io/zone");
            if zones.is_empty() {
                zones = text(labels, "topology.kubernetes.io/zone");
            }
            let zones: Vec<&str> = zones.split("__").collect();
            let disk = text(source, "pdName");
            if zones.len() == 1 && !zones[0].is_empty() {
                Ok(format!(
                    "projects/UNSPECIFIED/zones/{}/disks/{disk}",
                    zones[0]
                ))
            } else if zones.len() > 1 {
                let region = gce_region(&zones)
                    .map_err(|e| format!("failed to get region from zones: {e}"))?;
                Ok(format!(
                    "projects/UNSPECIFIED/regions/{region}/disks/{disk}"
                ))
            } else {
                Ok(format!(
                    "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/{disk}"
                ))
            }
        }
        AZURE_DISK => {
            azure_disk_managed(source)?;
            Ok(text(source, "diskURI").to_string())
        }
        CINDER | PORTWORX => Ok(text(source, "volumeID").to_string()),
        _ => Err(format!("no handle for {}", p.plugin)),
    }
}

/// Only managed Azure disks migrate: a `kind` other than `Managed` (any
/// case) is refused. The API server defaults `kind` to `Shared`, so an
/// Azure disk created without one is refused too.
fn azure_disk_managed(source: &Value) -> Result<(), String> {
    match source.get("kind").and_then(Value::as_str) {
        Some(kind) if !kind.eq_ignore_ascii_case("Managed") => {
            Err(format!("kind({kind}) is not supported in csi migration"))
        }
        _ => Ok(()),
    }
}

/// `gceGetRegionFromZones`: every zone `{locale}-{region}-{zone}`, all in
/// one region.
fn gce_region(zones: &[&str]) -> Result<String, String> {
    let mut regions = std::collections::BTreeSet::new();
    for zone in zones {
        let parts: Vec<&str> = zone.split('-').collect();
        if parts.len() != 3 {
            return Err(format!(
                "zone in unexpected format, expected: {{locale}}-{{region}}-{{zone}}, got: {zone}"
            ));
        }
        regions.insert(format!("{}-{}", parts[0], parts[1]));
    }
    if regions.len() != 1 {
        let list: Vec<&str> = regions.iter().map(String::as_str).collect();
        return Err(format!(
            "multiple or no regions gotten from zones, got: map[{}]",
            list.iter()
                .map(|r| format!("{r}:{{}}"))
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    Ok(regions.into_iter().next().unwrap_or_default())
}

/// `KubernetesVolumeIDToEBSVolumeID`: a bare id is kept as it is; an
/// `aws://<zone>/<id>` URL gives its path, which must be `vol-…` with no
/// further `/`.
pub fn ebs_volume_id(id: &str) -> Result<String, String> {
    if !id.starts_with("aws://") {
        return Ok(id.to_string());
    }
    let path = go_url_path(id).map_err(|e| format!("Invalid disk name ({id}): {e}"))?;
    let vol = path.trim_matches('/');
    if vol.starts_with("vol-") && !vol.contains('/') {
        Ok(vol.to_string())
    } else {
        Err(format!("Invalid format for AWS volume ({id})"))
    }
}

/// The unescaped path Go's `url.Parse` gives an `aws://…` string, or its
/// error as `%v` prints it (`parse "<url>": <why>`). Covers what
/// `url.Parse` checks on such a string: control characters, the
/// authority (userinfo, host characters, port), percent escapes in the
/// path and the fragment.
fn go_url_path(raw: &str) -> Result<String, String> {
    let (u, frag) = match raw.split_once('#') {
        Some((u, f)) => (u, Some(f)),
        None => (raw, None),
    };
    let fail = |url: &str, why: String| format!("parse {}: {why}", go_quote(url));
    if u.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err(fail(u, "net/url: invalid control character in URL".into()));
    }
    // Scheme "aws", then the query cut off at the first '?'.
    let rest = &u["aws:".len()..];
    let rest = rest.split_once('?').map_or(rest, |(r, _)| r);
    // "//authority/path".
    let rest = &rest[2..];
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    authority_ok(authority).map_err(|why| fail(u, why))?;
    let path = unescape(path, Mode::Path).map_err(|why| fail(u, why))?;
    if let Some(f) = frag {
        unescape(f, Mode::Fragment).map_err(|why| fail(raw, why))?;
    }
    Ok(path)
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Path,
    Fragment,
    Host,
    UserPassword,
}

/// Go's `parseAuthority` and `parseHost`, for their errors only.
fn authority_ok(authority: &str) -> Result<(), String> {
    let host = match authority.rfind('@') {
        Some(i) => {
            let user = &authority[..i];
            let valid = user
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-._:~!$&'()*+,;=%@".contains(c));
            if !valid {
                return Err("net/url: invalid userinfo".into());
            }
            unescape(user, Mode::UserPassword)?;
            &authority[i + 1..]
        }
        None => authority,
    };
    let port_ok = |p: &str| {
        p.is_empty() || (p.starts_with(':') && p[1..].bytes().all(|b| b.is_ascii_digit()))
    };
    if host.starts_with('[') {
        let Some(i) = host.rfind(']') else {
            return Err("missing ']' in host".into());
        };
        let port = &host[i + 1..];
        if !port_ok(port) {
            return Err(format!("invalid port {} after host", go_quote(port)));
        }
    } else if let Some(i) = host.rfind(':') {
        let port = &host[i..];
        if !port_ok(port) {
            return Err(format!("invalid port {} after host", go_quote(port)));
        }
    }
    unescape(host, Mode::Host)?;
    Ok(())
}

/// Go's `url.unescape`, for the modes met above.
fn unescape(s: &str, mode: Mode) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                if i + 2 >= b.len()
                    || !b[i + 1].is_ascii_hexdigit()
                    || !b[i + 2].is_ascii_hexdigit()
                {
                    let end = (i + 3).min(b.len());
                    return Err(format!("invalid URL escape {}", go_quote_bytes(&b[i..end])));
                }
                let v = u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap_or(0);
                if mode == Mode::Host && v < 0x80 && &s[i..i + 3] != "%25" {
                    // Only escapes of non-ASCII bytes (and %25) in a host.
                    if hex(b[i + 1]) < 8 {
                        return Err(format!("invalid URL escape {}", go_quote(&s[i..i + 3])));
                    }
                }
                out.push(v);
                i += 3;
            }
            c => {
                if mode == Mode::Host && c < 0x80 && host_must_escape(c) {
                    return Err(format!(
                        "invalid character {} in host name",
                        go_quote(&s[i..i + 1])
                    ));
                }
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

fn hex(c: u8) -> u8 {
    (c as char).to_digit(16).unwrap_or(0) as u8
}

/// Go's `shouldEscape(c, encodeHost)`.
fn host_must_escape(c: u8) -> bool {
    !(c.is_ascii_alphanumeric() || b"!$&'()*+,;=:[]<>\"-_.~".contains(&c))
}

/// Go's `strconv.Quote` of bytes that may cut a character: the bytes of
/// a broken character as `\x..`.
fn go_quote_bytes(b: &[u8]) -> String {
    match std::str::from_utf8(b) {
        Ok(s) => go_quote(s),
        Err(e) => {
            let (good, bad) = b.split_at(e.valid_up_to());
            let mut out = go_quote(std::str::from_utf8(good).unwrap_or(""));
            out.pop();
            for byte in bad {
                out.push_str(&format!("\\x{byte:02x}"));
            }
            out.push('"');
            out
        }
    }
}

/// Go's `strconv.Quote`, for the text met here.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ebs_ids_bare_or_as_aws_urls() {
        assert_eq!(ebs_volume_id("vol-123"), Ok("vol-123".into()));
        assert_eq!(
            ebs_volume_id("anything/at all"),
            Ok("anything/at all".into())
        );
        assert_eq!(
            ebs_volume_id("aws://us-east-1a/vol-123"),
            Ok("vol-123".into())
        );
        assert_eq!(ebs_volume_id("aws:///vol-123"), Ok("vol-123".into()));
        assert_eq!(ebs_volume_id("aws://z/vol-%41?x#y"), Ok("vol-A".into()));
        assert_eq!(
            ebs_volume_id("aws://us-east-1a/disk-1"),
            Err("Invalid format for AWS volume (aws://us-east-1a/disk-1)".into())
        );
        assert_eq!(
            ebs_volume_id("aws://vol-123"),
            Err("Invalid format for AWS volume (aws://vol-123)".into())
        );
        assert_eq!(
            ebs_volume_id("aws://z/a/vol-1"),
            Err("Invalid format for AWS volume (aws://z/a/vol-1)".into())
        );
        assert_eq!(
            ebs_volume_id("aws://z/vol-%zz"),
            Err(r#"Invalid disk name (aws://z/vol-%zz): parse "aws://z/vol-%zz": invalid URL escape "%zz""#.into())
        );
        assert_eq!(
            ebs_volume_id("aws://z:x/vol-1"),
            Err(r#"Invalid disk name (aws://z:x/vol-1): parse "aws://z:x/vol-1": invalid port ":x" after host"#.into())
        );
        assert_eq!(
            ebs_volume_id("aws://a b/vol-1"),
            Err(r#"Invalid disk name (aws://a b/vol-1): parse "aws://a b/vol-1": invalid character " " in host name"#.into())
        );
        assert_eq!(
            ebs_volume_id("aws://z/vol-%x\u{e9}"),
            Err("Invalid disk name (aws://z/vol-%x\u{e9}): parse \"aws://z/vol-%x\u{e9}\": invalid URL escape \"%x\\xc3\"".into())
        );
        assert_eq!(
            ebs_volume_id("aws://z/vol-1#%"),
            Err(r##"Invalid disk name (aws://z/vol-1#%): parse "aws://z/vol-1#%": invalid URL escape "%""##.into())
        );
    }

    #[test]
    fn gce_pv_handles_follow_the_zone_labels() {
        let pv = |labels: Value| json!({"metadata": {"labels": labels}, "spec": {"gcePersistentDisk": {"pdName": "d"}}});
        let gce = by_name(GCE_PD).unwrap();
        assert_eq!(
            pv_handle(gce, &pv(json!({}))),
            Ok("projects/UNSPECIFIED/zones/UNSPECIFIED/disks/d".into())
        );
        assert_eq!(
            pv_handle(
                gce,
                &pv(json!({"topology.kubernetes.io/zone": "us-central1-a"}))
            ),
            Ok("projects/UNSPECIFIED/zones/us-central1-a/disks/d".into())
        );
        // The beta label wins over the GA one.
        assert_eq!(
            pv_handle(
                gce,
                &pv(json!({"failure-domain.beta.kubernetes.io/zone": "b-c-d",
                           "topology.kubernetes.io/zone": "x-y-z"}))
            ),
            Ok("projects/UNSPECIFIED/zones/b-c-d/disks/d".into())
        );
        assert_eq!(
            pv_handle(
                gce,
                &pv(json!({"topology.kubernetes.io/zone": "us-central1-a__us-central1-b"}))
            ),
            Ok("projects/UNSPECIFIED/regions/us-central1/disks/d".into())
        );
        assert!(
            pv_handle(
                gce,
                &pv(json!({"topology.kubernetes.io/zone": "a__us-central1-b"}))
            )
            .is_err()
        );
        assert!(
            pv_handle(
                gce,
                &pv(json!({"topology.kubernetes.io/zone": "a-b-c__d-e-f"}))
            )
            .is_err()
        );
    }

    #[test]
    fn only_managed_azure_disks_translate() {
        let azure = by_name(AZURE_DISK).unwrap();
        let vol = |kind: Value| json!({"azureDisk": {"diskURI": "uri", "kind": kind}});
        assert_eq!(inline_handle(azure, &vol(Value::Null)), Ok("uri".into()));
        assert_eq!(
            inline_handle(azure, &vol(json!("managed"))),
            Ok("uri".into())
        );
        assert_eq!(
            inline_handle(azure, &vol(json!("Shared"))),
            Err("kind(Shared) is not supported in csi migration".into())
        );
    }

    #[test]
    fn five_plugins_are_migrated() {
        let on: Vec<&str> = IN_TREE
            .iter()
            .filter(|p| migration_on(p.plugin))
            .map(|p| p.plugin)
            .collect();
        assert_eq!(on, [GCE_PD, AWS_EBS, CINDER, AZURE_DISK, PORTWORX]);
        assert_eq!(
            plugin_of(&json!({"cinder": {"volumeID": "v"}}))
                .unwrap()
                .driver,
            "cinder.csi.openstack.org"
        );
        assert_eq!(plugin_of(&json!({"hostPath": {"path": "/"}})), None);
    }
}
