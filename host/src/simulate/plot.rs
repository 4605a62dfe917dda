//! `--plot FILE.svg`: allocation against arrived demand, and pending pods
//! over the replay, one line per configuration. SVG (plotters' SVG
//! backend), so no system fonts or external program are needed.

use super::report::Report;
use anyhow::{Result, anyhow, bail};
use plotters::prelude::*;
use std::path::Path;

const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// Writes the plot of `runs` (label, report) to `path` (.svg).
pub fn write(path: &Path, runs: &[(String, &Report)]) -> Result<()> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("svg") => {}
        _ => bail!(
            "--plot {}: only .svg is supported (plotters' SVG backend needs no system fonts)",
            path.display()
        ),
    }
    let Some((_, first)) = runs.first() else {
        bail!("nothing to plot");
    };
    let r = first.main_resource();
    let resource = first.resources[r].0.clone();
    let root = SVGBackend::new(path, (1100, 480)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let (left, right) = root.split_horizontally(560);

    // Allocation (% of capacity) against arrived demand (% of capacity).
    let pct = |v: i64, cap: i64| {
        if cap <= 0 {
            0.0
        } else {
            100.0 * v as f64 / cap as f64
        }
    };
    let max_arrived = runs
        .iter()
        .flat_map(|(_, rep)| {
            rep.samples
                .iter()
                .map(move |s| pct(s.arrived[r], rep.resources[r].1))
        })
        .fold(100.0f64, f64::max);
    let mut chart = ChartBuilder::on(&left)
        .caption(
            format!("{resource}: allocated vs arrived"),
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(44)
        .build_cartesian_2d(0.0..max_arrived.ceil(), 0.0..100.0)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("arrived demand, % of capacity")
        .y_desc("allocated, % of capacity")
        .draw()
        .map_err(err)?;
    for (i, (label, rep)) in runs.iter().enumerate() {
        let cap = rep.resources[r].1;
        let color = COLORS[i % COLORS.len()];
        chart
            .draw_series(LineSeries::new(
                rep.samples
                    .iter()
                    .map(|s| (pct(s.arrived[r], cap), pct(s.used[r], cap))),
                color.stroke_width(2),
            ))
            .map_err(err)?
            .label(label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;

    // Pending pods over the replay (attempts when the workload has no clock).
    let timed = runs
        .iter()
        .any(|(_, rep)| rep.samples.iter().any(|s| s.time > 0));
    let x_of = |s: &super::report::Sample| {
        if timed {
            s.time as f64
        } else {
            s.attempts as f64
        }
    };
    let max_x = runs
        .iter()
        .flat_map(|(_, rep)| rep.samples.iter().map(x_of))
        .fold(1.0f64, f64::max);
    let max_pending = runs
        .iter()
        .flat_map(|(_, rep)| rep.samples.iter().map(|s| s.pending as f64))
        .fold(1.0f64, f64::max);
    let mut chart = ChartBuilder::on(&right)
        .caption("pending pods", ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(52)
        .build_cartesian_2d(0.0..max_x, 0.0..max_pending * 1.05)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(if timed {
            "time, s"
        } else {
            "scheduling attempts"
        })
        .y_desc("pending (queued or unschedulable)")
        .draw()
        .map_err(err)?;
    for (i, (_, rep)) in runs.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        chart
            .draw_series(LineSeries::new(
                rep.samples.iter().map(|s| (x_of(s), s.pending as f64)),
                color.stroke_width(2),
            ))
            .map_err(err)?;
    }
    root.present()
        .map_err(|e| anyhow!("cannot write {}: {e}", path.display()))?;
    Ok(())
}

fn err<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow!("plot: {e}")
}
