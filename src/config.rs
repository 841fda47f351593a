//! Command-line and environment configuration.
//!
//! Every flag also reads a `NOGGIN_*` environment variable. Raw flags are
//! turned once into validated settings (e.g. [`ServeArgs::server_config`]) so
//! that the rest of the program never re-checks them.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::brain::watch::WatchMode;
use crate::index::IndexOptions;
use crate::knowledge;
use crate::research::llm::LlmSettings;
use crate::research::ResearchSettings;
use crate::server::guard::DoorRules;
use crate::server::serve::ConnectionLimits;

/// noggin: answers an assistant's open questions from your markdown notes
/// before it asks you.
#[derive(Debug, Parser)]
#[command(name = "noggin", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// `--addr`: an IP address and port (`127.0.0.1:7431`, `[::1]:7431`), or
/// `localhost:PORT` for 127.0.0.1; other host names are not looked up.
fn parse_listen_addr(text: &str) -> Result<SocketAddr, String> {
    if let Ok(addr) = text.parse() {
        return Ok(addr);
    }
    match text.rsplit_once(':') {
        Some((host, port)) if host.eq_ignore_ascii_case("localhost") => port
            .parse::<u16>()
            .map(|port| SocketAddr::from(([127, 0, 0, 1], port)))
            .map_err(|_| format!("{port:?} is not a port number")),
        _ => Err("expected IP:PORT (127.0.0.1:7431, [::1]:7431) or localhost:PORT".to_string()),
    }
}

impl Cli {
    /// Parses the command line, exiting with clap's usage error when it is
    /// wrong. Beyond what clap checks: `remember` pairs each -q with the -a
    /// right after it.
    pub fn from_command_line() -> Cli {
        let mut command = Cli::command();
        let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
        let matches = command
            .try_get_matches_from_mut(&args)
            .unwrap_or_else(|mut error| {
                name_the_variable(&command, &args, &mut error);
                error.exit()
            });
        let cli = Cli::from_arg_matches(&matches)
            .unwrap_or_else(|error| error.format(&mut command).exit());
        if let Some(("remember", remember)) = matches.subcommand() {
            if let Err(message) = RememberArgs::check_order(remember) {
                let remember = command
                    .find_subcommand_mut("remember")
                    .expect("remember is a subcommand");
                remember
                    .error(clap::error::ErrorKind::ArgumentConflict, message)
                    .exit();
            }
        }
        cli
    }
}

/// A value clap refuses for a flag that is not on the command line came
/// from the flag's `NOGGIN_*` variable (an empty `NOGGIN_MAX_NOTE_BYTES=`,
/// a `NOGGIN_NO_MODEL=yes`): the error names the flag, which the user never
/// typed, so a tip names the variable.
fn name_the_variable(
    command: &clap::Command,
    args: &[std::ffi::OsString],
    error: &mut clap::Error,
) {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if !matches!(
        error.kind(),
        ErrorKind::InvalidValue | ErrorKind::ValueValidation
    ) {
        return;
    }
    // Named as `--max-note-bytes <BYTES>`.
    let Some(ContextValue::String(arg)) = error.get(ContextKind::InvalidArg) else {
        return;
    };
    let Some(long) = arg
        .strip_prefix("--")
        .and_then(|rest| rest.split([' ', '=']).next())
    else {
        return;
    };
    let flag = format!("--{long}");
    let typed = args.iter().skip(1).any(|a| {
        a.to_str().is_some_and(|a| {
            a == flag
                || a.strip_prefix(flag.as_str())
                    .is_some_and(|r| r.starts_with('='))
        })
    });
    let Some(variable) = variable_of(command, long) else {
        return;
    };
    if typed || std::env::var_os(&variable).is_none() {
        return;
    }
    let tip = format!(
        "the value comes from the environment variable {}: set it to a valid value, or unset it",
        variable.to_string_lossy()
    );
    error.insert(
        ContextKind::Suggested,
        ContextValue::StyledStrs(vec![tip.into()]),
    );
}

/// How a check after parsing names the flag `--long`: with the variable it
/// reads (`--max-body-bytes (or NOGGIN_MAX_BODY_BYTES)`), taken from the
/// flag's own definition, since the value may have come from either.
fn flag(long: &str) -> String {
    match variable_of(&Cli::command(), long) {
        Some(variable) => format!("--{long} (or {})", variable.to_string_lossy()),
        None => format!("--{long}"),
    }
}

/// The environment variable of the flag `--long`, in `command` or any of
/// its subcommands (a flag reads the same variable wherever it appears).
fn variable_of(command: &clap::Command, long: &str) -> Option<std::ffi::OsString> {
    command
        .get_arguments()
        .find(|arg| arg.get_long() == Some(long))
        .and_then(|arg| arg.get_env())
        .map(|variable| variable.to_os_string())
        .or_else(|| {
            command
                .get_subcommands()
                .find_map(|sub| variable_of(sub, long))
        })
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the HTTP API and the web card, following changes to the brain.
    Serve(ServeArgs),
    /// Bring the index up to date with the brain and print a summary.
    Index(IndexArgs),
    /// Search the brain from the terminal.
    Search(SearchArgs),
    /// Answer open questions from the brain, as POST /v1/research does.
    Research(ResearchCmdArgs),
    /// Write the user's answers into the brain as a dated note.
    Remember(RememberArgs),
    /// Serve MCP over stdio (for an assistant that starts noggin itself).
    Mcp(McpArgs),
    /// Print a session's working-context block, as GET /v1/sessions/{id}/context does.
    Context(ContextArgs),
    /// Where did an agent lose its context? Analyse its tool-call trajectory.
    Analyze(AnalyzeArgs),
}

/// `noggin analyze`: needs no brain, only the trajectory.
#[derive(Debug, Clone, Args)]
pub struct AnalyzeArgs {
    /// The trajectory: a JSON list of {tool, arguments, is_error, at}, a
    /// Claude Code session or a Codex CLI rollout (JSONL); `-` reads stdin.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Print the analysis as JSON, as POST /v1/trajectories/analyze answers.
    #[arg(long)]
    pub json: bool,

    /// Also write the run's timeline as a page to this file.
    #[arg(long, value_name = "OUT.html")]
    pub html: Option<PathBuf>,

    /// Larger trajectories are refused.
    #[arg(long, default_value_t = crate::trajectory::MAX_TRAJECTORY_BYTES, value_name = "BYTES")]
    pub max_bytes: usize,

    #[command(flatten)]
    pub thresholds: crate::trajectory::Thresholds,
}

/// Where the brain and its index are.
#[derive(Debug, Clone, Args)]
pub struct BrainArgs {
    /// The brain: a folder of markdown notes (an Obsidian vault, a docs folder).
    #[arg(long, env = "NOGGIN_BRAIN", value_name = "DIR")]
    pub brain: PathBuf,

    /// Where the index is kept [default: <brain>/.noggin].
    #[arg(long, env = "NOGGIN_DATA_DIR", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,

    /// Notes larger than this many bytes are skipped.
    #[arg(long, env = "NOGGIN_MAX_NOTE_BYTES", default_value_t = 5 * 1024 * 1024, value_name = "BYTES")]
    pub max_note_bytes: u64,
}

impl BrainArgs {
    pub fn index_options(&self, read_only: bool) -> IndexOptions {
        IndexOptions {
            brain: self.brain.clone(),
            data_dir: self.data_dir.clone(),
            max_note_bytes: self.max_note_bytes,
            read_only,
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub brain: BrainArgs,

    /// Address to listen on. Anything but loopback requires --token.
    #[arg(
        long,
        env = "NOGGIN_ADDR",
        default_value = "127.0.0.1:7431",
        value_name = "HOST:PORT",
        value_parser = parse_listen_addr
    )]
    pub addr: SocketAddr,

    /// Bearer token required on every /v1 route.
    #[arg(long, env = "NOGGIN_TOKEN", hide_env_values = true)]
    pub token: Option<String>,

    /// Request bodies larger than this are refused with 413.
    #[arg(long, env = "NOGGIN_MAX_BODY_BYTES", default_value_t = 1024 * 1024, value_name = "BYTES")]
    pub max_body_bytes: usize,

    #[command(flatten)]
    pub follow: FollowArgs,

    #[command(flatten)]
    pub research: ResearchArgs,

    #[command(flatten)]
    pub knowledge: KnowledgeArgs,

    #[command(flatten)]
    pub card: CardArgs,

    #[command(flatten)]
    pub door: DoorArgs,

    #[command(flatten)]
    pub model: ModelArgs,
}

/// Who may reach the server, and for how long a connection may dawdle.
#[derive(Debug, Clone, Args)]
pub struct DoorArgs {
    /// A host name (besides the loopback names and --addr) under which the
    /// server may be reached, e.g. notes.lan; repeat or separate with commas.
    #[arg(
        long = "allowed-host",
        env = "NOGGIN_ALLOWED_HOSTS",
        value_delimiter = ',',
        value_name = "HOST"
    )]
    pub allowed_hosts: Vec<String>,

    /// An origin (scheme://host[:port]) whose web pages may call the server,
    /// besides pages the server serves itself; repeat or separate with commas.
    #[arg(
        long = "allowed-origin",
        env = "NOGGIN_ALLOWED_ORIGINS",
        value_delimiter = ',',
        value_name = "ORIGIN"
    )]
    pub allowed_origins: Vec<String>,

    /// A request's headers must arrive within this; it also ends idle
    /// kept-alive connections.
    #[arg(
        long,
        env = "NOGGIN_HEADER_TIMEOUT_MS",
        default_value_t = 10_000,
        value_name = "MS"
    )]
    pub header_timeout_ms: u64,

    /// A request body must arrive whole within this, counted from its head.
    #[arg(
        long,
        env = "NOGGIN_BODY_TIMEOUT_MS",
        default_value_t = 30_000,
        value_name = "MS"
    )]
    pub body_timeout_ms: u64,

    /// Connections served at once (1 to 1,000,000); more are answered 503.
    #[arg(
        long,
        env = "NOGGIN_MAX_CONNECTIONS",
        default_value_t = 512,
        value_name = "N"
    )]
    pub max_connections: usize,
}

/// The most `--max-connections` takes: far more than one machine serves,
/// and within what the connection limit can count.
const MAX_CONNECTIONS: usize = 1_000_000;

impl DoorArgs {
    /// Checks the door flags of a server listening on `addr`.
    fn rules(&self, addr: SocketAddr) -> anyhow::Result<(DoorRules, ConnectionLimits)> {
        for host in &self.allowed_hosts {
            let host = host.trim();
            if host.is_empty() || host.contains(['/', ' ', '@']) {
                anyhow::bail!(
                    "{} {host:?} must be a host name such as notes.lan",
                    flag("allowed-host")
                );
            }
        }
        for origin in &self.allowed_origins {
            let rest = origin
                .trim()
                .strip_prefix("http://")
                .or_else(|| origin.trim().strip_prefix("https://"));
            if !rest.is_some_and(|r| {
                !r.trim_end_matches('/').is_empty() && !r.trim_end_matches('/').contains('/')
            }) {
                anyhow::bail!(
                    "{} {origin:?} must be an origin such as https://app.example:8443",
                    flag("allowed-origin")
                );
            }
        }
        if self.header_timeout_ms == 0 || self.body_timeout_ms == 0 || self.max_connections == 0 {
            anyhow::bail!(
                "{}, {} and {} must be at least 1",
                flag("header-timeout-ms"),
                flag("body-timeout-ms"),
                flag("max-connections")
            );
        }
        if self.max_connections > MAX_CONNECTIONS {
            anyhow::bail!(
                "{} must be at most {MAX_CONNECTIONS}",
                flag("max-connections")
            );
        }
        Ok((
            DoorRules::new(addr, &self.allowed_hosts, &self.allowed_origins),
            ConnectionLimits {
                header_timeout: Duration::from_millis(self.header_timeout_ms),
                body_timeout: Duration::from_millis(self.body_timeout_ms),
                max_connections: self.max_connections,
            },
        ))
    }
}

/// Where the local semantic model is.
#[derive(Debug, Clone, Args)]
pub struct ModelArgs {
    /// Folder holding the semantic model (e5-small-q4.bin, installed by
    /// scripts/fetch-model.sh) [default: $XDG_CACHE_HOME/noggin/models,
    /// else ~/.cache/noggin/models].
    #[arg(long, env = "NOGGIN_MODEL_DIR", value_name = "DIR")]
    pub model_dir: Option<PathBuf>,

    /// Rank lexically only, without the semantic model.
    #[arg(long, env = "NOGGIN_NO_MODEL", value_parser = clap::builder::BoolishValueParser::new())]
    pub no_model: bool,
}

impl ModelArgs {
    /// The model folder to load from; `None` when the model is turned off.
    pub fn model_dir(&self) -> Option<PathBuf> {
        if self.no_model {
            return None;
        }
        crate::semantic::resolve_model_dir(self.model_dir.as_deref())
    }
}

/// What the web card shows.
#[derive(Debug, Clone, Args)]
pub struct CardArgs {
    /// Self-researched facts the card shows at most.
    #[arg(long, env = "NOGGIN_CARD_FACTS", default_value_t = 3, value_parser = clap::value_parser!(u16).range(1..=20), value_name = "N")]
    pub card_facts: u16,

    /// The card cuts longer answers (on a word, with "…") to this many characters.
    #[arg(long, env = "NOGGIN_CARD_ANSWER_CHARS", default_value_t = 150, value_parser = clap::value_parser!(u16).range(20..=2000), value_name = "CHARS")]
    pub card_answer_chars: u16,
}

/// Validated settings of the web card.
#[derive(Debug, Clone, Copy)]
pub struct CardSettings {
    pub facts: usize,
    pub answer_chars: usize,
}

impl From<&CardArgs> for CardSettings {
    fn from(args: &CardArgs) -> Self {
        CardSettings {
            facts: args.card_facts.into(),
            answer_chars: args.card_answer_chars.into(),
        }
    }
}

/// Where the notes written from the user's answers live: shared by
/// research (which reads them) and write-back (which writes them).
#[derive(Debug, Clone, Args)]
pub struct KnowledgeFolderArg {
    /// Folder of the notes written from the user's answers, relative to the brain.
    #[arg(
        long,
        env = "NOGGIN_KNOWLEDGE_FOLDER",
        default_value = "Alignment Knowledge",
        value_name = "DIR"
    )]
    pub knowledge_folder: String,
}

impl KnowledgeFolderArg {
    /// The folder, relative and `/`-separated, or why it cannot be used.
    pub fn validated(&self) -> anyhow::Result<String> {
        let folder = &self.knowledge_folder;
        let unified = folder.trim().replace('\\', "/");
        let parts: Vec<&str> = unified.split('/').filter(|p| !p.is_empty()).collect();
        let hidden = |p: &&str| p.starts_with('.') || *p == "node_modules";
        if parts.is_empty()
            || unified.starts_with('/')
            || unified.contains(':')
            || parts.iter().any(hidden)
        {
            anyhow::bail!(
                "{} {folder:?} must be a visible folder inside the brain \
                 (relative, no `..`, no hidden parts), or its notes would not be indexed",
                flag("knowledge-folder")
            );
        }
        Ok(parts.join("/"))
    }
}

/// How self-research gathers evidence and decides.
#[derive(Debug, Clone, Args)]
pub struct ResearchArgs {
    /// A note to use as the project context instead of the brain's notes
    /// with `noggin: project-context` in their frontmatter.
    #[arg(long, env = "NOGGIN_PROJECT_CONTEXT", value_name = "FILE")]
    pub project_context: Option<PathBuf>,

    /// The project context is cut (on a sentence) to this many characters.
    #[arg(
        long,
        env = "NOGGIN_PROJECT_CONTEXT_CHARS",
        default_value_t = 3000,
        value_name = "CHARS"
    )]
    pub project_context_chars: usize,

    /// Notes cited as evidence per question.
    #[arg(long, env = "NOGGIN_NOTES_PER_QUESTION", default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..=10), value_name = "N")]
    pub notes_per_question: u16,

    /// All evidence excerpts of one request together stay within this many characters.
    #[arg(
        long,
        env = "NOGGIN_EVIDENCE_BUDGET_CHARS",
        default_value_t = 4000,
        value_name = "CHARS"
    )]
    pub evidence_budget_chars: usize,

    /// Confidence (0 to 1) the local decider needs to call a question
    /// answered [default: 0.5 for the prior decider, 0.75 for the learned one].
    #[arg(long, env = "NOGGIN_ANSWER_THRESHOLD", value_name = "CONFIDENCE")]
    pub answer_threshold: Option<f32>,

    /// The local decider: `prior` (hand-made score) or `learned` (the
    /// calibrated model of train/fit_decider.py).
    #[arg(long, env = "NOGGIN_DECIDER", value_enum, default_value_t = crate::research::DeciderKind::Prior)]
    pub decider: crate::research::DeciderKind,

    #[command(flatten)]
    pub folder: KnowledgeFolderArg,

    /// An OpenAI-compatible API (e.g. http://127.0.0.1:8080/v1) whose
    /// /chat/completions decides instead of the local decider (which remains
    /// the fallback).
    #[arg(long, env = "NOGGIN_LLM_URL", value_name = "URL")]
    pub llm_url: Option<String>,

    /// Model name sent to the LLM.
    #[arg(
        long,
        env = "NOGGIN_LLM_MODEL",
        default_value = "gpt-4o-mini",
        value_name = "NAME"
    )]
    pub llm_model: String,

    /// Name of the environment variable that holds the LLM's API key.
    #[arg(
        long,
        env = "NOGGIN_LLM_API_KEY_ENV",
        default_value = "NOGGIN_LLM_API_KEY",
        value_name = "VAR"
    )]
    pub llm_api_key_env: String,

    /// Give up on the LLM after this long and use the local decider.
    #[arg(
        long,
        env = "NOGGIN_LLM_TIMEOUT_MS",
        default_value_t = 10_000,
        value_name = "MS"
    )]
    pub llm_timeout_ms: u64,
}

/// The note `--project-context` names (relative to the brain, or
/// absolute): a markdown note inside the brain, as any note noggin reads.
/// A file elsewhere would be served to every caller of the API as the
/// project's context; a missing one would leave research without it in
/// silence.
fn project_context_note(brain: &Path, given: &Path) -> anyhow::Result<PathBuf> {
    let named = || format!("{} {}", flag("project-context"), given.display());
    let root = crate::brain::canonical_root(brain)?;
    let path = std::fs::canonicalize(root.join(given))
        .map_err(|error| anyhow::anyhow!("{}: {error}", named()))?;
    let inside = path
        .strip_prefix(&root)
        .ok()
        .and_then(|rel| rel.to_str())
        .is_some_and(crate::brain::scan::is_note_path);
    if !inside || !path.is_file() {
        anyhow::bail!(
            "{}: not a note of the brain {} (a .md or .markdown file inside it, not hidden)",
            named(),
            root.display()
        );
    }
    Ok(path)
}

impl ResearchArgs {
    /// Checks the research flags; relative paths are taken from the brain.
    pub fn research_settings(&self, brain: &std::path::Path) -> anyhow::Result<ResearchSettings> {
        let threshold = self
            .answer_threshold
            .unwrap_or(self.decider.default_threshold());
        if !(0.0..=1.0).contains(&threshold) {
            anyhow::bail!("{} must be between 0 and 1", flag("answer-threshold"));
        }
        let folder = self.folder.validated()?;
        let llm = match self.llm_url.as_deref().filter(|u| !u.trim().is_empty()) {
            None => None,
            Some(url) => {
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    anyhow::bail!("{} must start with http:// or https://", flag("llm-url"));
                }
                Some(LlmSettings {
                    url: url.to_string(),
                    model: self.llm_model.clone(),
                    api_key: std::env::var(&self.llm_api_key_env)
                        .ok()
                        .filter(|k| !k.is_empty()),
                    timeout: Duration::from_millis(self.llm_timeout_ms.max(1)),
                })
            }
        };
        Ok(ResearchSettings {
            project_context_path: self
                .project_context
                .as_deref()
                .map(|given| project_context_note(brain, given))
                .transpose()?,
            project_context_chars: self.project_context_chars,
            notes_per_question: self.notes_per_question as usize,
            evidence_budget_chars: self.evidence_budget_chars,
            threshold,
            decider: self.decider,
            knowledge_folder: folder,
            llm,
        })
    }
}

/// Validated settings of the server.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub brain: BrainArgs,
    pub addr: SocketAddr,
    pub token: Option<String>,
    pub max_body_bytes: usize,
    pub watch: WatchMode,
    pub poll_interval: Duration,
    pub research: ResearchSettings,
    pub knowledge: knowledge::Settings,
    pub card: CardSettings,
    /// Hosts and origins that are served.
    pub door: DoorRules,
    /// Timeouts and the connection cap.
    pub connections: ConnectionLimits,
    /// The semantic model's folder; `None`: lexical only.
    pub model_dir: Option<PathBuf>,
}

impl ServerConfig {
    /// What the application core needs of these settings.
    pub fn core(&self) -> crate::app::CoreConfig {
        crate::app::CoreConfig {
            brain: self.brain.clone(),
            research: self.research.clone(),
            knowledge: self.knowledge.clone(),
            model_dir: self.model_dir.clone(),
        }
    }
}

impl ServeArgs {
    /// Checks the flags together; refuses to expose the brain without a token.
    pub fn server_config(self) -> anyhow::Result<ServerConfig> {
        let token = self.token.filter(|t| !t.is_empty());
        if !self.addr.ip().is_loopback() && token.is_none() {
            anyhow::bail!(
                "refusing to listen on {} without a token: anyone on the network could read the brain; \
                 set {}, or listen on 127.0.0.1",
                self.addr,
                flag("token")
            );
        }
        if self.max_body_bytes == 0 {
            anyhow::bail!("{} must be at least 1", flag("max-body-bytes"));
        }
        let poll_interval = self.follow.poll_interval()?;
        let research = self.research.research_settings(&self.brain.brain)?;
        let knowledge = self.knowledge.settings(&self.research.folder)?;
        let (door, connections) = self.door.rules(self.addr)?;
        Ok(ServerConfig {
            brain: self.brain,
            addr: self.addr,
            token,
            max_body_bytes: self.max_body_bytes,
            watch: self.follow.watch,
            poll_interval,
            research,
            knowledge,
            card: CardSettings::from(&self.card),
            door,
            connections,
            model_dir: self.model.model_dir(),
        })
    }
}

/// How a long-running way in (`serve`, `mcp`) follows edits to the brain.
#[derive(Debug, Clone, Args)]
pub struct FollowArgs {
    /// How to follow edits to the brain: native file events with a polling
    /// fallback (auto), periodic rescans only (poll), or not at all (off).
    #[arg(long, env = "NOGGIN_WATCH", value_enum, default_value_t = WatchMode::Auto)]
    pub watch: WatchMode,

    /// Interval of the periodic rescans when polling.
    #[arg(
        long,
        env = "NOGGIN_POLL_INTERVAL_MS",
        default_value_t = 2000,
        value_name = "MS"
    )]
    pub poll_interval_ms: u64,
}

impl FollowArgs {
    /// The interval of the periodic rescans, checked.
    pub fn poll_interval(&self) -> anyhow::Result<Duration> {
        if self.poll_interval_ms == 0 {
            anyhow::bail!("{} must be at least 1", flag("poll-interval-ms"));
        }
        Ok(Duration::from_millis(self.poll_interval_ms))
    }
}

/// `noggin mcp`: the brain over MCP on stdin/stdout, following edits.
#[derive(Debug, Clone, Args)]
pub struct McpArgs {
    #[command(flatten)]
    pub brain: BrainArgs,

    #[command(flatten)]
    pub follow: FollowArgs,

    #[command(flatten)]
    pub research: ResearchArgs,

    #[command(flatten)]
    pub knowledge: KnowledgeArgs,

    #[command(flatten)]
    pub model: ModelArgs,
}

impl McpArgs {
    /// The core's settings and how to follow the brain.
    pub fn core(&self) -> anyhow::Result<(crate::app::CoreConfig, Duration)> {
        let poll_interval = self.follow.poll_interval()?;
        let core = crate::app::CoreConfig {
            brain: self.brain.clone(),
            research: self.research.research_settings(&self.brain.brain)?,
            knowledge: self.knowledge.settings(&self.research.folder)?,
            model_dir: self.model.model_dir(),
        };
        Ok((core, poll_interval))
    }
}

#[derive(Debug, Clone, Args)]
pub struct IndexArgs {
    #[command(flatten)]
    pub brain: BrainArgs,

    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Args)]
pub struct SearchArgs {
    #[command(flatten)]
    pub brain: BrainArgs,

    /// Print the hits as JSON.
    #[arg(long)]
    pub json: bool,

    /// Number of notes to show.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=100))]
    pub limit: u16,

    /// Only notes under this folder.
    #[arg(long)]
    pub folder: Option<String>,

    /// Only notes with this tag.
    #[arg(long)]
    pub tag: Option<String>,

    /// What to look for.
    #[arg(required = true, num_args = 1..)]
    pub query: Vec<String>,
}

#[derive(Debug, Clone, Args)]
pub struct ResearchCmdArgs {
    #[command(flatten)]
    pub brain: BrainArgs,

    #[command(flatten)]
    pub research: ResearchArgs,

    /// Print the response as JSON (the shape of POST /v1/research).
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub marker: MarkerArg,

    /// The request the questions are about.
    #[arg(long, default_value = "")]
    pub prompt: String,

    /// An open question; repeat for more (at most 20).
    #[arg(
        short = 'q',
        long = "question",
        required = true,
        value_name = "QUESTION"
    )]
    pub questions: Vec<String>,
}

/// The marker of self-researched answers: shown before them where they
/// appear as text, and the sign that an answer must not be saved as the
/// user's.
#[derive(Debug, Clone, Args)]
pub struct MarkerArg {
    /// Start of an answer that noggin found by itself, as shown to the user;
    /// such answers are never saved as the user's.
    #[arg(long, env = "NOGGIN_MARKER", default_value = crate::research::MARKER)]
    pub marker: String,
}

impl MarkerArg {
    pub fn validated(&self) -> anyhow::Result<String> {
        if self.marker.trim().is_empty() {
            anyhow::bail!("{} must not be empty", flag("marker"));
        }
        Ok(self.marker.clone())
    }
}

/// How the user's answers are written back into the brain (the folder is
/// `--knowledge-folder`, shared with research).
#[derive(Debug, Clone, Args)]
pub struct KnowledgeArgs {
    /// Do not write answers into the brain (every answer is skipped as
    /// `disabled`).
    #[arg(long, env = "NOGGIN_NO_SAVE", value_parser = clap::builder::BoolishValueParser::new())]
    pub no_save: bool,

    /// Answers shorter than this many characters are not saved.
    #[arg(
        long,
        env = "NOGGIN_MIN_ANSWER_CHARS",
        default_value_t = 20,
        value_name = "CHARS"
    )]
    pub min_answer_chars: usize,

    #[command(flatten)]
    pub marker: MarkerArg,

    /// Date of the notes written, instead of today's local date (YYYY-MM-DD).
    #[arg(long, env = "NOGGIN_TODAY", hide = true, value_name = "YYYY-MM-DD")]
    pub today: Option<chrono::NaiveDate>,
}

impl KnowledgeArgs {
    /// Checks the folder (inside the brain, visible so that its notes are
    /// indexed) and the marker.
    pub fn settings(&self, folder: &KnowledgeFolderArg) -> anyhow::Result<knowledge::Settings> {
        let folder = folder.validated()?;
        Ok(knowledge::Settings {
            save: !self.no_save,
            folder,
            min_answer_chars: self.min_answer_chars,
            marker: self.marker.validated()?,
            today: self.today,
        })
    }
}

#[derive(Debug, Clone, Args)]
pub struct ContextArgs {
    #[command(flatten)]
    pub brain: BrainArgs,

    /// The session whose working context to print.
    #[arg(long, value_name = "ID")]
    pub session: String,

    /// Characters the block may take.
    #[arg(long, default_value_t = crate::context::DEFAULT_BLOCK_BUDGET_CHARS, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..=crate::context::MAX_BUDGET_CHARS as u64), value_name = "CHARS")]
    pub budget: usize,

    /// Print the response of GET /v1/sessions/{id}/context as JSON.
    #[arg(long)]
    pub json: bool,
}

impl BrainArgs {
    /// The data folder: `--data-dir`, else `<brain>/.noggin`.
    pub fn data_dir(&self) -> anyhow::Result<PathBuf> {
        Ok(match &self.data_dir {
            Some(dir) => dir.clone(),
            None => crate::brain::canonical_root(&self.brain)?.join(".noggin"),
        })
    }
}

#[derive(Debug, Clone, Args)]
pub struct RememberArgs {
    #[command(flatten)]
    pub brain: BrainArgs,

    #[command(flatten)]
    pub knowledge: KnowledgeArgs,

    #[command(flatten)]
    pub folder: KnowledgeFolderArg,

    /// The request the answers clarify; it names the note.
    #[arg(long)]
    pub prompt: String,

    /// A question; each -q is paired with the -a that follows it.
    #[arg(
        short = 'q',
        long = "question",
        value_name = "QUESTION",
        required = true
    )]
    pub questions: Vec<String>,

    /// The user's answer to the question before it.
    #[arg(short = 'a', long = "answer", value_name = "ANSWER", required = true)]
    pub answers: Vec<String>,

    /// Print the outcome as JSON.
    #[arg(long)]
    pub json: bool,
}

impl ResearchCmdArgs {
    /// The core's settings: research as flagged, nothing written.
    pub fn core(&self) -> anyhow::Result<crate::app::CoreConfig> {
        let research = self.research.research_settings(&self.brain.brain)?;
        let knowledge = knowledge::Settings {
            folder: research.knowledge_folder.clone(),
            marker: self.marker.validated()?,
            ..knowledge::Settings::default()
        };
        Ok(crate::app::CoreConfig {
            brain: self.brain.clone(),
            research,
            knowledge,
            model_dir: None,
        })
    }
}

impl RememberArgs {
    /// The core's settings: write-back as flagged.
    pub fn core(&self) -> anyhow::Result<crate::app::CoreConfig> {
        let knowledge = self.knowledge.settings(&self.folder)?;
        let research = ResearchSettings {
            knowledge_folder: knowledge.folder.clone(),
            ..ResearchSettings::default()
        };
        Ok(crate::app::CoreConfig {
            brain: self.brain.clone(),
            research,
            knowledge,
            model_dir: None,
        })
    }

    /// Each -q must come right before its -a: an -a before its -q, two -q
    /// in a row or unequal counts would pair answers with the wrong
    /// questions. A usage error (exit 2), like every other misuse of flags.
    fn check_order(matches: &ArgMatches) -> Result<(), String> {
        let at = |id: &str| -> Vec<usize> {
            matches
                .indices_of(id)
                .map(|i| i.collect())
                .unwrap_or_default()
        };
        let (questions, answers) = (at("questions"), at("answers"));
        if questions.len() != answers.len() {
            return Err(format!(
                "{} questions but {} answers: give every -q QUESTION its -a ANSWER",
                questions.len(),
                answers.len()
            ));
        }
        for (i, (q, a)) in questions.iter().zip(&answers).enumerate() {
            let next_question = questions.get(i + 1);
            if a < q || next_question.is_some_and(|next| next < a) {
                return Err(format!(
                    "answer {} does not come right after its question: \
                     give each -q QUESTION its -a ANSWER next",
                    i + 1
                ));
            }
        }
        Ok(())
    }

    /// The question/answer pairs, in order.
    pub fn pairs(&self) -> anyhow::Result<Vec<knowledge::Answer>> {
        if self.questions.len() != self.answers.len() {
            anyhow::bail!(
                "{} questions but {} answers: give every -q QUESTION its -a ANSWER",
                self.questions.len(),
                self.answers.len()
            );
        }
        Ok(self
            .questions
            .iter()
            .zip(&self.answers)
            .map(|(q, a)| knowledge::Answer {
                question: q.clone(),
                answer: a.clone(),
                source: None,
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checks_after_parsing_name_each_flag_with_its_variable() {
        for (long, variable) in [
            ("allowed-host", "NOGGIN_ALLOWED_HOSTS"),
            ("allowed-origin", "NOGGIN_ALLOWED_ORIGINS"),
            ("header-timeout-ms", "NOGGIN_HEADER_TIMEOUT_MS"),
            ("body-timeout-ms", "NOGGIN_BODY_TIMEOUT_MS"),
            ("max-connections", "NOGGIN_MAX_CONNECTIONS"),
            ("knowledge-folder", "NOGGIN_KNOWLEDGE_FOLDER"),
            ("answer-threshold", "NOGGIN_ANSWER_THRESHOLD"),
            ("llm-url", "NOGGIN_LLM_URL"),
            ("token", "NOGGIN_TOKEN"),
            ("max-body-bytes", "NOGGIN_MAX_BODY_BYTES"),
            ("poll-interval-ms", "NOGGIN_POLL_INTERVAL_MS"),
            ("marker", "NOGGIN_MARKER"),
        ] {
            assert_eq!(flag(long), format!("--{long} (or {variable})"));
        }
    }

    #[test]
    fn listen_addresses_are_ip_addresses_or_localhost() {
        let ok = |text: &str| parse_listen_addr(text).unwrap().to_string();
        assert_eq!(ok("127.0.0.1:7431"), "127.0.0.1:7431");
        assert_eq!(ok("[::1]:0"), "[::1]:0");
        assert_eq!(ok("localhost:7437"), "127.0.0.1:7437");
        assert_eq!(ok("LOCALHOST:1"), "127.0.0.1:1");
        for bad in ["localhost", "localhost:x", "example.com:80", ":80", ""] {
            assert!(parse_listen_addr(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn remember_pairs_each_question_with_the_answer_after_it() {
        let order = |args: &[&str]| {
            let mut argv = vec!["noggin", "remember", "--brain", "b", "--prompt", "p"];
            argv.extend_from_slice(args);
            let matches = Cli::command().try_get_matches_from(argv).unwrap();
            RememberArgs::check_order(matches.subcommand_matches("remember").unwrap())
        };
        assert!(order(&["-q", "one?", "-a", "1", "-q", "two?", "-a", "2"]).is_ok());
        assert!(order(&["-q", "one?", "-q", "two?", "-a", "1", "-a", "2"]).is_err());
        assert!(order(&["-a", "1", "-q", "one?"]).is_err());
        assert!(order(&["--question", "one?", "--answer=1"]).is_ok());
        // Unequal counts say how many of each there are.
        let unequal = order(&["-q", "one?", "-a", "1", "-q", "two?"]).unwrap_err();
        assert!(unequal.contains("2 questions but 1 answers"), "{unequal}");
    }

    fn serve(args: &[&str]) -> anyhow::Result<ServerConfig> {
        let mut argv = vec!["noggin", "serve", "--brain", "b"];
        argv.extend_from_slice(args);
        match Cli::try_parse_from(argv)?.command {
            Command::Serve(s) => s.server_config(),
            _ => unreachable!("parsed a serve command"),
        }
    }

    #[test]
    fn non_loopback_needs_a_token() {
        assert!(serve(&["--addr", "0.0.0.0:7431"]).is_err());
        assert!(serve(&["--addr", "0.0.0.0:7431", "--token", ""]).is_err());
        assert!(serve(&["--addr", "0.0.0.0:7431", "--token", "s3cret"]).is_ok());
        assert!(serve(&["--addr", "[::1]:7431"]).is_ok());
        assert!(serve(&[]).is_ok());
    }

    #[test]
    fn knowledge_settings_are_checked() {
        let ok = serve(&[
            "--knowledge-folder",
            "Notes/Answers/",
            "--today",
            "2026-11-22",
        ])
        .unwrap();
        assert_eq!(ok.knowledge.folder, "Notes/Answers");
        assert_eq!(
            ok.knowledge.today,
            chrono::NaiveDate::from_ymd_opt(2026, 11, 22)
        );
        assert!(ok.knowledge.save);
        assert!(!serve(&["--no-save"]).unwrap().knowledge.save);
        for bad in [
            "",
            "/etc",
            "../out",
            "a/../../b",
            ".hidden",
            "a/.git",
            "C:\\x",
        ] {
            assert!(serve(&["--knowledge-folder", bad]).is_err(), "{bad:?}");
        }
        assert!(serve(&["--marker", " "]).is_err());
        assert!(serve(&["--today", "22.11.2026"]).is_err());
    }

    #[test]
    fn remember_pairs_questions_with_answers() {
        let parse = |args: &[&str]| {
            let mut argv = vec!["noggin", "remember", "--brain", "b", "--prompt", "p"];
            argv.extend_from_slice(args);
            match Cli::try_parse_from(argv)?.command {
                Command::Remember(r) => r.pairs(),
                _ => unreachable!("parsed a remember command"),
            }
        };
        let pairs = parse(&["-q", "one?", "-a", "first", "-q", "two?", "-a", "second"]).unwrap();
        assert_eq!(pairs[1].question, "two?");
        assert_eq!(pairs[1].answer, "second");
        assert!(parse(&["-q", "one?", "-a", "first", "-q", "two?"]).is_err());
        assert!(parse(&[]).is_err());
    }

    #[test]
    fn door_flags_are_checked() {
        let ok = serve(&[
            "--allowed-host",
            "notes.lan,Other.Example:8080",
            "--allowed-origin",
            "https://app.example:8443",
            "--header-timeout-ms",
            "250",
        ])
        .unwrap();
        assert!(ok.door.host_allowed("notes.lan:7431"));
        assert!(ok.door.host_allowed("other.example"));
        assert!(ok
            .door
            .origin_allowed("https://app.example:8443", Some("127.0.0.1:7431")));
        assert_eq!(ok.connections.header_timeout, Duration::from_millis(250));
        for bad in [
            ["--allowed-host", "http://x"],
            ["--allowed-host", ""],
            ["--allowed-origin", "app.example"],
            ["--allowed-origin", "https://app.example/path"],
            ["--header-timeout-ms", "0"],
            ["--max-connections", "0"],
            ["--max-connections", "1000001"],
            ["--max-connections", "18446744073709551615"],
            ["--max-body-bytes", "0"],
        ] {
            assert!(serve(&bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn card_settings_have_bounds() {
        let card = serve(&[]).unwrap().card;
        assert_eq!((card.facts, card.answer_chars), (3, 150));
        let card = serve(&["--card-facts", "5", "--card-answer-chars", "80"])
            .unwrap()
            .card;
        assert_eq!((card.facts, card.answer_chars), (5, 80));
        for bad in [["--card-facts", "0"], ["--card-answer-chars", "5"]] {
            assert!(serve(&bad).is_err(), "{bad:?}");
        }
    }
}
