//! `--plot FILE.svg`: allocation against arrived demand, and pending pods
//! over the replay, one line per configuration. SVG (plotters' SVG
//! backend), so no system fonts or external program are needed.

use super::report::{Report, Sample};
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
    let queues = runs.iter().any(|(_, rep)| !rep.queues.is_empty());
    let width = if queues { 1650 } else { 1100 };
    let root = SVGBackend::new(path, (width, 480)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let (left, rest) = root.split_horizontally(560);
    let (right, third) = rest.split_horizontally(if queues { 540 } else { 560 });
    allocation(&left, runs, r, &resource)?;
    pending(&right, runs)?;
    if queues {
        queue_shares(&third, runs, &resource)?;
    }
    root.present()
        .map_err(|e| anyhow!("cannot write {}: {e}", path.display()))?;
    Ok(())
}

/// Allocation (% of capacity) of resource `r` against arrived demand (%
/// of capacity): how close each configuration stays to what was asked.
fn allocation<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    runs: &[(String, &Report)],
    r: usize,
    resource: &str,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
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
    let mut chart = ChartBuilder::on(area)
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
    Ok(())
}

/// Pending pods over the replay, by time (attempts when the workload has
/// no clock); colors follow the allocation chart's legend.
fn pending<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    runs: &[(String, &Report)],
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let timed = runs
        .iter()
        .any(|(_, rep)| rep.samples.iter().any(|s| s.time > 0));
    let x_of = |s: &Sample| {
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
    let mut chart = ChartBuilder::on(area)
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
    Ok(())
}

/// Batch mode: each queue's allocation of the main resource over time
/// (solid) against what proportion says it deserves (dashed), as % of the
/// cluster.
fn queue_shares<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    runs: &[(String, &Report)],
    resource: &str,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let max_x = runs
        .iter()
        .flat_map(|(_, rep)| rep.queues.iter().map(|q| q.time as f64))
        .fold(1.0f64, f64::max);
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!("queues: {resource} allocated (solid) vs deserved (dashed)"),
            ("sans-serif", 16),
        )
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(44)
        .build_cartesian_2d(0.0..max_x, 0.0..100.0)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("time, s")
        .y_desc("% of cluster")
        .draw()
        .map_err(err)?;
    let mut color_index = 0;
    for (label, rep) in runs {
        let total = rep
            .resources
            .iter()
            .find(|(n, _)| n == resource)
            .map_or(0, |(_, t)| *t) as f64;
        let mut names: Vec<&str> = rep.queues.iter().map(|q| q.queue.as_str()).collect();
        names.sort();
        names.dedup();
        for name in names {
            let color = COLORS[color_index % COLORS.len()];
            color_index += 1;
            let series = |deserved: bool| {
                rep.queues
                    .iter()
                    .filter(move |q| q.queue == name)
                    .map(move |q| {
                        let v = q
                            .resources
                            .iter()
                            .find(|(n, _, _)| n == resource)
                            .map_or(0.0, |(_, a, d)| if deserved { *d } else { *a });
                        let pct = if total > 0.0 { 100.0 * v / total } else { 0.0 };
                        (q.time as f64, pct.min(100.0))
                    })
            };
            let legend = if runs.len() > 1 {
                format!("{label}: {name}")
            } else {
                name.to_string()
            };
            chart
                .draw_series(LineSeries::new(series(false), color.stroke_width(2)))
                .map_err(err)?
                .label(legend)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
            chart
                .draw_series(DashedLineSeries::new(
                    series(true),
                    6,
                    4,
                    color.stroke_width(1),
                ))
                .map_err(err)?;
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    Ok(())
}

fn err<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow!("plot: {e}")
}
