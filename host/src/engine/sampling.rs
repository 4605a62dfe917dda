//! How many feasible nodes a cycle looks for (kube-scheduler's
//! `numFeasibleNodesToFind`): all nodes below 100; otherwise
//! `percentageOfNodesToScore` of them, adaptive when 0
//! (`max(5, 50 - n/125)` percent), and never fewer than 100.

/// Below this many nodes, every node is checked.
pub const MIN_FEASIBLE_NODES_TO_FIND: usize = 100;
/// The floor of the adaptive percentage.
pub const MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND: i64 = 5;

pub fn num_feasible_nodes_to_find(
    percentage_of_nodes_to_score: u32,
    num_all_nodes: usize,
) -> usize {
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND {
        return num_all_nodes;
    }
    let n = num_all_nodes as i64;
    let mut percentage = i64::from(percentage_of_nodes_to_score);
    if percentage == 0 {
        percentage = (50 - n / 125).max(MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND);
    }
    let num_nodes = n * percentage / 100;
    (num_nodes as usize).max(MIN_FEASIBLE_NODES_TO_FIND)
}
