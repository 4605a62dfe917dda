//! ImageLocality: favours nodes that already hold the pod's images, each
//! image weighed by its size and by how far it has spread over the cluster
//! (`imagelocality/image_locality.go`), so that pods of one image do not
//! all heat up the few nodes that pulled it first.
//!
//! Image volumes (`volumes[].image`) are not counted: the model carries
//! containers' images only.

use sift_sdk::{
    Args, ClusterView, ExtensionPoints, MAX_NODE_SCORE, Node, NodeFields, Plugin, Pod, PreScore,
    Status, export_plugin,
};

const MB: i64 = 1024 * 1024;
/// Below this sum a node scores 0 (upstream's `minThreshold`).
const MIN_THRESHOLD: i64 = 23 * MB;
/// Per container, the sum at which a node scores 100
/// (`maxContainerThreshold`).
const MAX_CONTAINER_THRESHOLD: i64 = 1000 * MB;

/// What PreScore reads of the cluster, kept for the view it was built
/// from (upstream's snapshot keeps one `ImageStateSummary` per image):
/// without it every pod walked every node's images, 2 ms per pod at 5,000
/// nodes of 20 images, three quarters of a default cycle (BENCHMARKS.md).
#[derive(Default)]
pub struct ImageLocality {
    index: std::sync::Mutex<Option<(u64, std::sync::Arc<ImageIndex>)>>,
}

/// Per image name: how many nodes hold it and the size the lowest slot
/// holding it reports; and how many nodes there are.
#[derive(Default)]
struct ImageIndex {
    held: std::collections::HashMap<String, (usize, i64)>,
    nodes: usize,
}

impl ImageIndex {
    fn scan(cluster: &dyn ClusterView) -> ImageIndex {
        let mut index = ImageIndex::default();
        let mut seen: std::collections::HashSet<&str> = Default::default();
        for node in (0..cluster.slots()).filter_map(|s| cluster.node(s)) {
            index.nodes += 1;
            seen.clear();
            for image in node.images.iter() {
                for name in &image.names {
                    // A node counts once per name, with the first image
                    // that lists it.
                    if seen.insert(name) {
                        let e = index
                            .held
                            .entry(name.clone())
                            .or_insert((0, image.size_bytes));
                        e.0 += 1;
                    }
                }
            }
        }
        index
    }
}

impl ImageLocality {
    /// The index of `cluster`, built once per view generation.
    fn index(&self, cluster: &dyn ClusterView) -> std::sync::Arc<ImageIndex> {
        let Some(generation) = cluster.generation() else {
            return std::sync::Arc::new(ImageIndex::scan(cluster));
        };
        if let Ok(cached) = self.index.lock()
            && let Some((g, index)) = cached.as_ref()
            && *g == generation
        {
            return index.clone();
        }
        let index = std::sync::Arc::new(ImageIndex::scan(cluster));
        if let Ok(mut cached) = self.index.lock() {
            *cached = Some((generation, index.clone()));
        }
        index
    }
}

/// The pod's images, normalized, each with what the cluster holds of it.
#[derive(Default)]
pub struct Images {
    /// One per init container and container, in spec order.
    wanted: Vec<Wanted>,
    /// Init containers plus containers: the ceiling is per container.
    containers: usize,
}

struct Wanted {
    name: String,
    /// `size × nodes holding it / all nodes`, truncated, as upstream's
    /// `scaledImageScore`; 0 when no node holds it.
    scaled: i64,
}

impl Plugin for ImageLocality {
    const NAME: &'static str = "ImageLocality";
    const NODE_FIELDS: NodeFields = NodeFields::IMAGES;
    const EXTENSION_POINTS: ExtensionPoints = ExtensionPoints::SCORE;
    type PodState = Images;

    fn new(_: Args) -> Result<Self, String> {
        Ok(ImageLocality::default())
    }

    /// Counts, over every node of the cluster (not only the feasible ones,
    /// as upstream's cache does), the nodes holding each of the pod's
    /// images. An image's size is the one the lowest slot holding it
    /// reports (upstream takes the first node its cache saw).
    fn pre_score(&self, pod: &Pod, _: &[&Node], cluster: &dyn ClusterView) -> PreScore<Images> {
        let index = self.index(cluster);
        let wanted: Vec<Wanted> = pod
            .images
            .iter()
            .map(|i| {
                let name = normalized(i);
                let (count, size) = index.held.get(&name).copied().unwrap_or((0, 0));
                Wanted {
                    name,
                    scaled: scaled(size, count, index.nodes),
                }
            })
            .collect();
        // A node holding every image would still sum below the floor: every
        // node scores 0, which is what a skip gives (the common case of
        // nodes that report no images), without a call per node.
        if wanted.iter().map(|w| w.scaled).sum::<i64>() < MIN_THRESHOLD {
            return PreScore::Skip;
        }
        PreScore::Proceed(Images {
            wanted,
            containers: pod.images.len(),
        })
    }

    fn score(&self, _: &Pod, state: &Images, node: &Node) -> Result<i64, Status> {
        let sum: i64 = state
            .wanted
            .iter()
            .filter(|w| node.images.iter().any(|im| im.names.contains(&w.name)))
            .map(|w| w.scaled)
            .sum();
        Ok(priority(sum, state.containers))
    }
}

/// The name as the container runtime reports it: `:latest` added when the
/// reference has no tag (a `:` after the last `/`; a registry's port is
/// before it). Node names are compared as reported.
fn normalized(image: &str) -> String {
    let colon = image.rfind(':').map_or(-1, |i| i as i64);
    let slash = image.rfind('/').map_or(-1, |i| i as i64);
    if colon <= slash {
        format!("{image}:latest")
    } else {
        image.to_string()
    }
}

/// `int64(float64(size) * (nodes / total))`, as upstream computes it.
fn scaled(size: i64, nodes: usize, total: usize) -> i64 {
    if nodes == 0 || total == 0 {
        return 0;
    }
    let spread = nodes as f64 / total as f64;
    (size as f64 * spread) as i64
}

/// The sum clamped into the thresholds, scaled to `0..=MAX_NODE_SCORE`
/// (`calculatePriority`). A pod with no container at all has a ceiling of
/// 0 below the floor; it scores 0, where upstream would divide by a
/// negative number (no such pod passes API validation).
fn priority(sum: i64, containers: usize) -> i64 {
    let max = MAX_CONTAINER_THRESHOLD.saturating_mul(containers as i64);
    if max <= MIN_THRESHOLD {
        return 0;
    }
    let clamped = sum.clamp(MIN_THRESHOLD, max);
    MAX_NODE_SCORE * (clamped - MIN_THRESHOLD) / (max - MIN_THRESHOLD)
}

export_plugin!(ImageLocality);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_without_a_tag_get_latest() {
        assert_eq!(normalized("nginx"), "nginx:latest");
        assert_eq!(normalized("nginx:1.27"), "nginx:1.27");
        assert_eq!(normalized("registry:5000/app"), "registry:5000/app:latest");
        assert_eq!(
            normalized("app@sha256:abcd"),
            "app@sha256:abcd",
            "a digest's colon counts as a tag's"
        );
    }

    #[test]
    fn priority_clamps_and_scales() {
        assert_eq!(priority(0, 1), 0);
        assert_eq!(priority(MIN_THRESHOLD, 1), 0);
        assert_eq!(priority(MAX_CONTAINER_THRESHOLD, 1), 100);
        assert_eq!(priority(10 * MAX_CONTAINER_THRESHOLD, 1), 100);
        // Halfway between the thresholds of two containers.
        let mid = (MIN_THRESHOLD + 2 * MAX_CONTAINER_THRESHOLD) / 2;
        assert_eq!(priority(mid, 2), 50);
        assert_eq!(priority(5 * MB, 0), 0);
    }

    #[test]
    fn spread_scales_the_size() {
        assert_eq!(scaled(300 * MB, 1, 3), 100 * MB);
        assert_eq!(scaled(300 * MB, 0, 3), 0);
    }
}
