//! The `noggin` command: parses flags, sets up logging, runs a subcommand
//! (see `noggin::cli`) and turns its result into an exit code.

use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = noggin::config::Cli::from_command_line();
    noggin::cli::init_logging(&cli.command);
    match noggin::cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        // The reader went away (`noggin search … | head -1`): as other
        // command-line tools, stop without a word.
        Err(error)
            if error.chain().any(|cause| {
                cause
                    .downcast_ref::<std::io::Error>()
                    .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
            }) =>
        {
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("noggin: {error:#}");
            ExitCode::FAILURE
        }
    }
}
