//! The `noggin` command: parses flags, sets up logging, runs a subcommand
//! (see `noggin::cli`) and turns its result into an exit code.

use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = noggin::config::Cli::from_command_line();
    noggin::cli::init_logging();
    match noggin::cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("noggin: {error:#}");
            ExitCode::FAILURE
        }
    }
}
