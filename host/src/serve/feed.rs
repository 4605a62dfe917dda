//! The cluster state, with what came from the `--cluster` files: a file
//! change can then remove what the file no longer holds, and a change
//! that does not read leaves the previous state serving.

use crate::cluster::ClusterState;
use crate::input::Objects;
use crate::input::kube;
use crate::input::read::BoundPods;
use crate::runtime::cache::sha256_hex;
use anyhow::{Context, Result, anyhow};
use sift_sdk::Node;
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::rc::Rc;

/// The cluster state with what came from `--cluster` files, so a file
/// change can remove what the file no longer holds.
pub struct ClusterFeed {
    pub state: ClusterState,
    pub files: Vec<PathBuf>,
    file_nodes: BTreeSet<String>,
    file_pods: BTreeSet<String>,
    file_namespaces: BTreeSet<String>,
    pub file_error: Option<String>,
    /// Whether nodes keep their whole object (a loaded plugin reads it).
    pub keep_node_objects: bool,
    /// SHA-256 of each file's contents last applied: a file event that
    /// leaves them unchanged (touch, chmod, a rewrite with the same bytes)
    /// costs a read, not a parse.
    applied: Option<Vec<String>>,
    /// Reloads that applied the files.
    pub reloads: u64,
}

/// What the files hold, every object checked, nothing applied yet. Bound
/// pods are only keys here: they reach the state in a second read.
struct Checked {
    objects: Objects,
    nodes: BTreeSet<String>,
    models: Vec<Node>,
    pods: BTreeSet<String>,
    namespaces: BTreeSet<String>,
}

impl ClusterFeed {
    /// A feed of `files` (none applied yet) over `state`.
    pub fn new(state: ClusterState, files: Vec<PathBuf>, keep_node_objects: bool) -> ClusterFeed {
        ClusterFeed {
            state,
            files,
            file_nodes: BTreeSet::new(),
            file_pods: BTreeSet::new(),
            file_namespaces: BTreeSet::new(),
            file_error: None,
            keep_node_objects,
            applied: None,
            reloads: 0,
        }
    }

    /// Applies the files again after a file event or SIGHUP (`force`), with
    /// whole node objects when `keep` (a loaded plugin reads them). A
    /// failure is logged once per distinct message and the state stays.
    pub fn reload(&mut self, force: bool, keep: bool) {
        // Whole node objects are kept only while a loaded plugin reads
        // them; when one starts to, the files are applied again with them.
        let force = force || (keep && !self.keep_node_objects);
        if keep && !self.keep_node_objects {
            tracing::warn!(
                "a plugin now reads whole node objects: nodes from --cluster files get them now, \
                 nodes POSTed to /cluster only when they are sent again"
            );
        }
        self.keep_node_objects = keep;
        match self.reload_files(force) {
            Ok(false) => self.file_error = None,
            Ok(true) => {
                self.file_error = None;
                tracing::info!(
                    nodes = self.state.node_count(),
                    pods = self.state.pod_count(),
                    "cluster files reloaded"
                );
            }
            Err(e) => {
                let message = format!("{e:#}");
                // Once per distinct failure, not once per file event.
                if self.file_error.as_ref() != Some(&message) {
                    tracing::error!(
                        "cluster files not reloaded, the previous state stays: {message}"
                    );
                }
                self.file_error = Some(message);
            }
        }
    }

    /// Applies the files; `Ok(false)` when their contents are those applied
    /// last (unless `force`d).
    pub fn reload_files(&mut self, force: bool) -> Result<bool> {
        if self.files.is_empty() {
            return Ok(false);
        }
        let mut texts = Vec::with_capacity(self.files.len());
        for f in &self.files {
            texts.push(std::fs::read(f).with_context(|| format!("cannot read {}", f.display()))?);
        }
        let digests: Vec<String> = texts.iter().map(|t| sha256_hex(t)).collect();
        if !force && self.applied.as_ref() == Some(&digests) {
            return Ok(false);
        }
        let mut texts_utf8 = Vec::with_capacity(texts.len());
        for (f, bytes) in self.files.iter().zip(texts) {
            let text = String::from_utf8(bytes)
                .map_err(|e| anyhow!("cannot read {}: not UTF-8 text: {e}", f.display()))?;
            texts_utf8.push(text);
        }
        let checked = self.check(&texts_utf8)?;
        self.apply(checked, &texts_utf8)?;
        self.applied = Some(digests);
        self.reloads += 1;
        Ok(true)
    }

    /// The first of two passes over the text, so that no pod is kept as an
    /// object (a 65,000-node dump's 650,000 bound pods took 2 GB as
    /// objects) and nothing is applied unless everything reads: it checks
    /// every object and keeps the bound pods' keys; [`ClusterFeed::apply`]
    /// hands the bound pods to the cluster state as they are read again.
    fn check(&self, texts: &[String]) -> Result<Checked> {
        let bound_keys: Rc<RefCell<BTreeSet<String>>> = Default::default();
        let mut objects = Objects {
            bound_pods_to: Some(BoundPods({
                let keys = bound_keys.clone();
                Box::new(move |pod, origin| {
                    kube::pod(&pod).map_err(|e| anyhow!("{origin}: {e:#}"))?;
                    keys.borrow_mut().insert(kube::pod_key(&pod));
                    Ok(())
                })
            })),
            ..Default::default()
        };
        for (f, text) in self.files.iter().zip(texts) {
            objects.read_text(f, text)?;
        }
        objects.bound_pods_to = None;
        let mut nodes = BTreeSet::new();
        let mut pods = std::mem::take(&mut *bound_keys.borrow_mut());
        let mut models = Vec::new();
        for (obj, origin) in &objects.nodes {
            let mut node = kube::node(obj).map_err(|e| anyhow!("{origin}: {e:#}"))?;
            if self.keep_node_objects {
                node.object = Some(kube::object_json(obj));
            }
            nodes.insert(node.name.clone());
            models.push(node);
        }
        for (pod, origin) in &objects.pods {
            kube::pod_resources(pod).map_err(|e| anyhow!("{origin}: {e:#}"))?;
            pods.insert(kube::pod_key(pod));
        }
        let mut namespaces = BTreeSet::new();
        for (ns, origin) in &objects.namespaces {
            let name = ns.metadata.name.clone().unwrap_or_default();
            if name.is_empty() {
                return Err(anyhow!("{origin}: namespace has no metadata.name"));
            }
            namespaces.insert(name);
        }
        Ok(Checked {
            objects,
            nodes,
            models,
            pods,
            namespaces,
        })
    }

    /// Applies what [`ClusterFeed::check`] found, reading the bound pods
    /// into the state, and removes what the files no longer hold.
    fn apply(&mut self, checked: Checked, texts: &[String]) -> Result<()> {
        let Checked {
            objects,
            nodes,
            models,
            pods,
            namespaces,
        } = checked;
        for gone in self.file_nodes.difference(&nodes) {
            self.state.remove_node(gone);
        }
        for node in models {
            self.state.upsert_node(node);
        }
        for (pod, _) in &objects.pods {
            self.state.upsert_pod(pod)?;
        }
        self.read_bound_pods(texts)?;
        for gone in self.file_pods.difference(&pods) {
            self.state.remove_pod_key(gone);
        }
        for (ns, _) in &objects.namespaces {
            self.state.upsert_namespace(ns);
        }
        for gone in self.file_namespaces.difference(&namespaces) {
            self.state.remove_namespace(gone);
        }
        self.file_nodes = nodes;
        self.file_pods = pods;
        self.file_namespaces = namespaces;
        Ok(())
    }

    /// The second pass: the files' bound pods handed to the state as they
    /// are read, none kept as an object.
    fn read_bound_pods(&mut self, texts: &[String]) -> Result<()> {
        let state = Rc::new(RefCell::new(std::mem::take(&mut self.state)));
        let applied = {
            let mut second = Objects {
                bound_pods_to: Some(ClusterState::bound_pods_into(&state)),
                ..Default::default()
            };
            let mut result = Ok(());
            for (f, text) in self.files.iter().zip(texts) {
                result = result.and_then(|_| second.read_text(f, text));
            }
            result
        };
        self.state = Rc::try_unwrap(state)
            .map(RefCell::into_inner)
            .unwrap_or_else(|rc| rc.borrow().clone());
        applied
    }
}
