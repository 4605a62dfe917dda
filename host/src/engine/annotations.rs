//! The annotations reserve plugins give the assumed pod, checked as the API
//! server checks a pod's `metadata.annotations` (apimachinery's
//! `ValidateAnnotations`): qualified-name keys, at most 256 KiB of keys and
//! values in all. A binding could not carry more, and without a cap one
//! plugin's 80,000 annotations made every later cycle slower.

use super::plugin::PluginError;
use std::collections::HashMap;

/// apimachinery's `TotalAnnotationSizeLimitB`.
pub const MAX_TOTAL_BYTES: usize = 256 * 1024;

/// The pod's annotations as reserve steps leave them: each plugin's in
/// order, a later plugin's value replacing an earlier one's for the same
/// key. Linear in the annotations returned.
#[derive(Default)]
pub struct ReservedAnnotations {
    list: Vec<(String, String)>,
    /// Each key's place in `list`, and the answer that last set it.
    index: HashMap<String, (usize, u32)>,
    /// Answers added so far.
    answers: u32,
    /// Bytes of keys and values of the pod's own annotations that no
    /// reserve step replaced, plus those in `list`.
    bytes: usize,
}

impl ReservedAnnotations {
    /// Starts from the pod's own annotations (they count toward the size
    /// limit, as on the API server).
    pub fn for_pod(pod: &sift_sdk::Pod) -> ReservedAnnotations {
        ReservedAnnotations {
            bytes: pod.annotations.iter().map(|(k, v)| k.len() + v.len()).sum(),
            ..Default::default()
        }
    }

    /// Adds what `plugin`'s reserve step returned; an invalid key, a key
    /// twice in one answer, or going past the size limit is the plugin's
    /// error.
    pub fn add(
        &mut self,
        plugin: &str,
        pod: &sift_sdk::Pod,
        answer: Vec<(String, String)>,
    ) -> Result<(), PluginError> {
        let error = |message: String| PluginError {
            plugin: plugin.to_string(),
            message,
        };
        self.answers += 1;
        let this = self.answers;
        for (k, v) in answer {
            if let Err(why) = check_key(&k) {
                return Err(error(format!(
                    "reserve returned an invalid annotation key {:?}: {why}",
                    crate::text::truncate(&k, 100)
                )));
            }
            let known = self.index.get(&k).copied();
            if known.is_some_and(|(_, by)| by == this) {
                return Err(error(format!(
                    "reserve returned the annotation key {:?} twice",
                    crate::text::truncate(&k, 100)
                )));
            }
            // A value replaced, here or on the pod, no longer counts.
            let replaced = match known {
                Some((i, _)) => self.list[i].1.len() + k.len(),
                None => pod.annotations.get(&k).map_or(0, |v| v.len() + k.len()),
            };
            self.bytes = self.bytes - replaced + k.len() + v.len();
            if self.bytes > MAX_TOTAL_BYTES {
                return Err(error(format!(
                    "reserve returned annotations past the API server's limit: the pod's \
                     annotations would be more than {MAX_TOTAL_BYTES} bytes (at key {:?}, \
                     value of {} bytes)",
                    crate::text::truncate(&k, 100),
                    v.len()
                )));
            }
            match known {
                Some((i, _)) => {
                    self.list[i].1 = v;
                    self.index.insert(k, (i, this));
                }
                None => {
                    self.index.insert(k.clone(), (self.list.len(), this));
                    self.list.push((k, v));
                }
            }
        }
        Ok(())
    }

    pub fn into_list(self) -> Vec<(String, String)> {
        self.list
    }
}

/// apimachinery's `IsQualifiedName`: `[prefix/]name`, the name 1 to 63
/// characters of `[A-Za-z0-9._-]` beginning and ending alphanumeric, the
/// prefix a DNS subdomain (lower case, at most 253 characters).
pub fn check_key(key: &str) -> Result<(), String> {
    let (prefix, name) = match key.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    if name.is_empty() {
        return Err("name part must be non-empty".into());
    }
    if name.len() > 63 {
        return Err("name part must be no more than 63 characters".into());
    }
    let alnum = |c: char| c.is_ascii_alphanumeric();
    if !name.starts_with(alnum)
        || !name.ends_with(alnum)
        || !name
            .chars()
            .all(|c| alnum(c) || matches!(c, '-' | '_' | '.'))
    {
        return Err(
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start \
             and end with an alphanumeric character"
                .into(),
        );
    }
    if let Some(prefix) = prefix {
        if prefix.is_empty() {
            return Err("prefix part must be non-empty".into());
        }
        if prefix.len() > 253 {
            return Err("prefix part must be no more than 253 characters".into());
        }
        let label_ok = |l: &str| {
            !l.is_empty()
                && l.len() <= 63
                && l.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
                && l.ends_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
                && l.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        };
        if !prefix.split('.').all(label_ok) {
            return Err("prefix part must be a lowercase RFC 1123 subdomain".into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_qualified_names() {
        for ok in [
            "a",
            "alibabacloud.com/gpu-index",
            "x.y-z/A_b.c",
            "k8s.io/0",
            &"n".repeat(63),
        ] {
            assert_eq!(check_key(ok), Ok(()), "{ok}");
        }
        for bad in [
            "",
            "/x",
            "a/",
            "a\nb",
            "a\u{1b}[31m",
            "a\0",
            "-a",
            "a.",
            "UPPER.com/x",
            "a//b",
            "a b",
            &"n".repeat(64),
            &format!("{}/x", "p".repeat(254)),
        ] {
            assert!(check_key(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn later_plugins_replace_and_the_total_is_capped() {
        let pod = sift_sdk::Pod::default();
        let mut r = ReservedAnnotations::for_pod(&pod);
        r.add(
            "A",
            &pod,
            vec![("a".into(), "1".into()), ("b".into(), "2".into())],
        )
        .unwrap();
        r.add("B", &pod, vec![("a".into(), "3".into())]).unwrap();
        assert_eq!(r.bytes, 4);
        let list = r.into_list();
        assert_eq!(list, [("a".into(), "3".into()), ("b".into(), "2".into())]);

        let mut r = ReservedAnnotations::for_pod(&pod);
        let e = r
            .add(
                "A",
                &pod,
                vec![("a".into(), "1".into()), ("a".into(), "2".into())],
            )
            .unwrap_err();
        assert!(e.to_string().contains("plugin A") && e.to_string().contains("twice"));

        let mut r = ReservedAnnotations::for_pod(&pod);
        let big = "v".repeat(MAX_TOTAL_BYTES);
        let e = r.add("A", &pod, vec![("k".into(), big)]).unwrap_err();
        assert!(e.message.contains("262144 bytes"), "{e}");
        // Replacing a large value with a small one frees its bytes.
        let mut r = ReservedAnnotations::for_pod(&pod);
        let half = "v".repeat(MAX_TOTAL_BYTES / 2);
        r.add("A", &pod, vec![("k".into(), half.clone())]).unwrap();
        r.add("B", &pod, vec![("k".into(), half.clone())]).unwrap();
        r.add(
            "C",
            &pod,
            vec![("j".into(), "x".repeat(MAX_TOTAL_BYTES / 2 - 4))],
        )
        .unwrap();
        // 80,000 keys: linear, and refused once past the limit.
        let many: Vec<(String, String)> =
            (0..80_000).map(|i| (format!("k{i}"), "v".into())).collect();
        let mut r = ReservedAnnotations::for_pod(&pod);
        assert!(r.add("A", &pod, many).is_err());
    }
}
