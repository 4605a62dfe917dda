//! `sift-wat-component IN.wat OUT.wasm`: a core module written in WAT
//! against the contract's canonical ABI, wrapped into a component of the
//! world `sift:predicate/predicate-plugin@0.1.0` (wat + wit-component).

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, output] = args.as_slice() else {
        eprintln!("usage: sift-wat-component IN.wat OUT.wasm");
        return ExitCode::from(2);
    };
    let result = std::fs::read_to_string(input)
        .map_err(|e| format!("cannot read {input}: {e}"))
        .and_then(|wat| sift_tests::component_from_wat(&wat).map_err(|e| format!("{input}: {e}")))
        .and_then(|bytes| {
            std::fs::write(output, bytes).map_err(|e| format!("cannot write {output}: {e}"))
        });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}
