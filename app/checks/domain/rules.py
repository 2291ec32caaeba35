"""The rule catalogue: every rule a finding or a refused upload can name.

The official checker's rules are passed through from its own message catalogue (their
ids, titles and rule-book sections are the checker's; the portal never rewords them).
The portal's own rules are written here once, with what they check, why, and what to do
about them; the code that applies a rule asks this catalogue for its title and clause,
so an uncatalogued rule cannot be emitted. ``GET /api/v1/rules`` and the ``/rules`` page
are both generated from :func:`catalogue`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from functools import cache

from submission_checker import messages as official_messages

from app.checks.domain.findings import Finding, Severity, Source, portal_finding


class Stage(enum.StrEnum):
    """When a rule is applied, in the order a submission meets them."""

    UPLOAD = "upload"  # the archive itself, before anything is stored
    FILES = "files"  # the metadata files, before the official checker opens them
    CHECKS = "checks"  # the automated checks (official and the portal's own)
    RECOUNT = "recount"  # re-counting a point's events with the reference tokenizer
    REPRODUCTION = "reproduction"  # running a point again against the endpoint


STAGE_TITLES = {
    Stage.UPLOAD: "Upload: the archive",
    Stage.FILES: "Metadata files",
    Stage.CHECKS: "Automated checks",
    Stage.RECOUNT: "Re-counts",
    Stage.REPRODUCTION: "Reproductions",
}


@dataclass(frozen=True)
class Rule:
    id: str
    title: str
    clause: str  # the rule-book section (§n.m), or "portal" for the portal's own safeguards
    stage: Stage
    source: Source
    explanation: str
    # The worst a finding of this rule can be: an error rejects the submission (an upload
    # rule refuses the archive). None for official rules: the checker decides in code.
    severity: Severity | None
    fix: str | None = None

    def finding(
        self,
        severity: Severity,
        message: str,
        *,
        point: str | None = None,
        fix: str | None = None,
    ) -> Finding:
        return portal_finding(
            self.id, self.title, self.clause, severity, message, point=point, fix=fix
        )


def _portal(
    id: str,
    title: str,
    clause: str,
    stage: Stage,
    severity: Severity,
    explanation: str,
    fix: str | None = None,
) -> Rule:
    return Rule(id, title, clause, stage, Source.PORTAL, explanation, severity, fix)


_REPACK = "Pack the bundle again with endpoints-submission-cli and upload what it writes."
_UPLOAD = Stage.UPLOAD
_ERROR = Severity.ERROR

PORTAL_RULES: tuple[Rule, ...] = (
    # The archive (architecture §5: nothing in a bundle is trusted).
    _portal(
        "no-file",
        "An archive is sent",
        "portal",
        _UPLOAD,
        _ERROR,
        "An upload sends its archive as the form part named 'file'.",
        "Choose the bundle's archive in the form, or send it as the 'file' part.",
    ),
    _portal(
        "several-files",
        "One archive per upload",
        "portal",
        _UPLOAD,
        _ERROR,
        "An upload sends exactly one archive; a submission is one bundle.",
        "Send each archive in an upload of its own.",
    ),
    _portal(
        "empty-upload",
        "The file has content",
        "portal",
        _UPLOAD,
        _ERROR,
        "An empty file holds no bundle (a download that failed, or the wrong file chosen).",
        "Choose the archive that endpoints-submission-cli wrote.",
    ),
    _portal(
        "upload-too-large",
        "Upload size limit",
        "portal",
        _UPLOAD,
        _ERROR,
        "The upload may be at most the configured size (ENDPOINTS_PORTAL_MAX_UPLOAD_BYTES); "
        "it is stopped as soon as it passes the limit.",
        "Leave out what the bundle format does not ask for.",
    ),
    _portal(
        "unsupported-format",
        "Archive format",
        "portal",
        _UPLOAD,
        _ERROR,
        "The upload must be a gzip-compressed tar (.tar.gz, .tgz) or a zip archive; the "
        "format is read from the file's first bytes, not its name.",
        _REPACK,
    ),
    _portal(
        "corrupt-archive",
        "Readable archive",
        "portal",
        _UPLOAD,
        _ERROR,
        "The archive must read to its end: a truncated download, a damaged member or a "
        "member without its data is refused.",
        "Upload the archive again; if it still fails, pack it again.",
    ),
    _portal(
        "empty-archive",
        "Archive holds files",
        "portal",
        _UPLOAD,
        _ERROR,
        "An archive with no regular files holds no submission.",
        _REPACK,
    ),
    _portal(
        "encrypted-member",
        "No encrypted members",
        "portal",
        _UPLOAD,
        _ERROR,
        "Encrypted zip members cannot be checked, so they are refused.",
        "Pack the bundle without a password.",
    ),
    _portal(
        "bad-name",
        "Plain member names",
        "portal",
        _UPLOAD,
        _ERROR,
        "Every member name must be a plain relative path: no NUL byte, no control "
        "characters, no backslashes or drive letters, and it must name a file.",
        _REPACK,
    ),
    _portal(
        "absolute-path",
        "No absolute paths",
        "portal",
        _UPLOAD,
        _ERROR,
        "A member whose name starts at the file system's root would be written outside "
        "the submission.",
        _REPACK,
    ),
    _portal(
        "path-traversal",
        "No path traversal",
        "portal",
        _UPLOAD,
        _ERROR,
        "A member whose name climbs out of the archive with '..' (or resolves outside it) "
        "would overwrite files elsewhere.",
        _REPACK,
    ),
    _portal(
        "symlink",
        "No symbolic links",
        "portal",
        _UPLOAD,
        _ERROR,
        "A symbolic link can point anywhere on the server; a bundle holds regular files only.",
        "Replace each link with the file it points to, then pack again.",
    ),
    _portal(
        "hardlink",
        "No hard links",
        "portal",
        _UPLOAD,
        _ERROR,
        "A hard link can alias a file outside the bundle; a bundle holds regular files only.",
        "Replace each link with the file it points to, then pack again.",
    ),
    _portal(
        "special-file",
        "Regular files only",
        "portal",
        _UPLOAD,
        _ERROR,
        "Devices, pipes and other special files have no place in a bundle.",
        _REPACK,
    ),
    _portal(
        "duplicate-member",
        "Each member once",
        "portal",
        _UPLOAD,
        _ERROR,
        "A member that appears twice would let two readers see two different files.",
        _REPACK,
    ),
    _portal(
        "path-conflict",
        "No file where a folder is",
        "portal",
        _UPLOAD,
        _ERROR,
        "A member may not be both a file and the folder of other members.",
        _REPACK,
    ),
    _portal(
        "too-many-members",
        "Member count limit",
        "portal",
        _UPLOAD,
        _ERROR,
        "An archive may hold at most the configured number of members "
        "(ENDPOINTS_PORTAL_MAX_ARCHIVE_MEMBERS).",
        "Leave out what the bundle format does not ask for.",
    ),
    _portal(
        "member-too-large",
        "Member size limit",
        "portal",
        _UPLOAD,
        _ERROR,
        "No single member may expand beyond the configured size "
        "(ENDPOINTS_PORTAL_MAX_MEMBER_BYTES).",
        "Leave out what the bundle format does not ask for.",
    ),
    _portal(
        "too-large",
        "Expanded size limit",
        "portal",
        _UPLOAD,
        _ERROR,
        "Everything the archive expands to must stay within the configured size "
        "(ENDPOINTS_PORTAL_MAX_EXTRACTED_BYTES).",
        "Leave out what the bundle format does not ask for.",
    ),
    _portal(
        "compression-ratio",
        "No compression bombs",
        "portal",
        _UPLOAD,
        _ERROR,
        "A member that expands far beyond what real data compresses to is a decompression "
        "bomb; extraction stops when the ratio is passed.",
        _REPACK,
    ),
    _portal(
        "bad-tar-header",
        "Plain tar headers",
        "portal",
        _UPLOAD,
        _ERROR,
        "Every tar header is read by the portal's own bounded reader before Python's tarfile "
        "sees it: an extended (PAX) header must be well-formed records of bounded size, "
        "without the long digit runs that make this Python's tarfile take hours "
        "(CVE-2024-6232), and at most one extension header may precede a member.",
        "Pack the bundle with a standard tar (endpoints-submission-cli, GNU tar or bsdtar).",
    ),
    _portal(
        "overlapping-members",
        "No overlapping zip members",
        "portal",
        _UPLOAD,
        _ERROR,
        "Each zip member's data must end before the next member begins; members that share "
        "their data are the 'quoted-overlap' zip bomb (CVE-2024-0450).",
        _REPACK,
    ),
    _portal(
        "unwritable-member",
        "Members the file system takes",
        "portal",
        _UPLOAD,
        _ERROR,
        "Every member must be writable as a plain file: a name part of at most 255 bytes, "
        "and nothing the file system refuses.",
        "Shorten the file and folder names, then pack again.",
    ),
    _portal(
        "archive-budget",
        "Archive reading budget",
        "portal",
        _UPLOAD,
        _ERROR,
        "An archive is read in a process of its own with a budget of processor time "
        "(ENDPOINTS_PORTAL_ARCHIVE_CPU_S) and memory (ENDPOINTS_PORTAL_ARCHIVE_MEMORY_BYTES); "
        "one that needs more is stopped and refused, and nothing of it is kept.",
        "Leave out what the bundle format does not ask for; an archive of the official "
        "layout reads in a few seconds.",
    ),
    _portal(
        "size-mismatch",
        "Declared sizes hold",
        "portal",
        _UPLOAD,
        _ERROR,
        "A member must hold exactly as many bytes as its header declares.",
        _REPACK,
    ),
    _portal(
        "no-submission-root",
        "One submission root",
        "portal",
        _UPLOAD,
        _ERROR,
        "The archive must hold one submission folder with systems/ and results/ as the "
        "submission CLI lays it out.",
        _REPACK,
    ),
    _portal(
        "several-submissions",
        "One submission per upload",
        "portal",
        _UPLOAD,
        _ERROR,
        "An archive with more than one submission folder is ambiguous.",
        "Upload each submission on its own.",
    ),
    _portal(
        "organisation-mismatch",
        "Submitter is the uploader",
        "portal",
        _UPLOAD,
        _ERROR,
        "The submitter that system_desc.json names must be the organisation that uploads; "
        "nobody submits in another organisation's name.",
        "Sign in as a member of the organisation the bundle names, or correct system_desc.json.",
    ),
    _portal(
        "archive-stored-already",
        "Archive uploaded before",
        "portal",
        _UPLOAD,
        _ERROR,
        "An archive with exactly these bytes is stored already, uploaded for another "
        "organisation; it is refused without a word about that submission.",
        "Upload your own organisation's bundle.",
    ),
    # The metadata files.
    _portal(
        "readable-files",
        "Metadata files are plain, bounded data",
        "portal",
        Stage.FILES,
        _ERROR,
        "Every JSON/YAML file under results/ is UTF-8, at most 8 MiB (YAML 1 MiB), nests at "
        "most 64 levels, has no alias bomb, no repeated key, no NaN or Infinity and no integer "
        "beyond ±2^128; otherwise the bundle is rejected before the checker runs.",
        "Write the file again with the submission CLI; metadata files are UTF-8 JSON or "
        "YAML with finite numbers and each key once.",
    ),
    # The portal's own automated checks.
    _portal(
        "duplicate-upload",
        "Duplicate upload",
        "portal",
        Stage.CHECKS,
        _ERROR,
        "The bundle's content (cli_metadata.json aside) must differ from every earlier "
        "upload: the same results cannot be submitted twice.",
        "Follow the earlier submission instead; to submit new results, upload the bundle "
        "that holds them.",
    ),
    _portal(
        "bundle-runs",
        "Built from its registered runs",
        "§8",
        Stage.CHECKS,
        _ERROR,
        "A submission composed from runs with the official CLI (the Submission API) must be "
        "built from exactly those runs: every point's result summary is one of them, and "
        "every run is in the bundle, as the CLI's builder assembles it.",
        "Build the bundle with endpoints-submission-cli from the submission's runs (submissions "
        "update rebuilds it).",
    ),
    _portal(
        "bundle-declarations",
        "Declared as registered",
        "§11.10",
        Stage.CHECKS,
        _ERROR,
        "What the submission was registered with (division, availability, scenario, target "
        "availability date) must be what its bundle's system descriptions say.",
        "Build the bundle with endpoints-submission-cli, which writes the declarations into "
        "every system_desc.json.",
    ),
    # A result's publication status over time (rules §11.10).
    _portal(
        "rdi-status",
        "RDI division, RDI status",
        "§11.10",
        Stage.CHECKS,
        _ERROR,
        "A result of the RDI division always has RDI status (SR §7.2.5): its system "
        "description cannot declare it Available or Preview.",
        "Declare system_availability_status RDI, or submit in another division.",
    ),
    _portal(
        "preview-target-date",
        "Preview date within its window",
        "§11.10",
        Stage.CHECKS,
        _ERROR,
        "A Preview result declares a target_availability_date within 180 days of the cohort "
        "in which it first appears (the cohort it is eligible for, before it has appeared).",
        "Declare a date within the window, or submit the system once it is Available.",
    ),
    _portal(
        "rdi-cooling-off",
        "RDI cooling-off",
        "§11.10",
        Stage.CHECKS,
        _ERROR,
        "A component first published as RDI (its accelerator model, its system, its "
        "serving software) may not be submitted as Available or Preview before the later of "
        "the cohort date after next and 221 days after that first publication.",
        "Submit it as RDI until the date the finding names, or wait for it.",
    ),
    _portal(
        "preview-continuity",
        "Available within 5 % of its Preview",
        "§11.10",
        Stage.CHECKS,
        _ERROR,
        "The Available result that ships a Preview keeps its throughput: system_tps and "
        "tps_per_user may each fall by at most 5 % from the Preview's, point by point (the "
        "concurrencies both have); latency is not gated.",
        "Submit the configuration the Preview measured, or explain the change to the "
        "committee (a re-run where the configuration changed).",
    ),
    _portal(
        "dataset-name",
        "Declared dataset",
        "§6.2",
        Stage.CHECKS,
        _ERROR,
        "point.yaml's dataset names a benchmark dataset of the catalogue (the official "
        "checker's minimum-query-count table, and any the operator adds). A value that is "
        "not a plain name (a path, say) is an error; a name outside the catalogue is a "
        "warning: its minimum query count goes unchecked and the portal cannot reproduce "
        "or re-check its points.",
        "Declare the benchmark's dataset by its catalogue name, e.g. cnn_dailymail.",
    ),
    _portal(
        "target-cohort-cutoff",
        "Target cohort cutoff",
        "§4.1",
        Stage.CHECKS,
        Severity.WARNING,
        "Automated checks must pass at least one business day before the target cohort's "
        "Wednesday; otherwise the results roll to the next eligible cohort.",
        "Expect publication in the next eligible cohort, or resubmit with a later "
        "target_cohort and a seed set adoptable for it.",
    ),
    # Re-counting a point's events with the reference tokenizer.
    _portal(
        "recounted-output-tokens",
        "Re-counted output tokens",
        "§1.3",
        Stage.RECOUNT,
        _ERROR,
        "The output tokens of every response, counted with the model's reference "
        "tokenizer, must match the submitted total within the tolerance (1% by default).",
        "Explain the difference or resubmit numbers the run's events support.",
    ),
    _portal(
        "recounted-system-tps",
        "Re-counted system throughput",
        "§1.3",
        Stage.RECOUNT,
        _ERROR,
        "The re-counted tokens over the point's own duration must give the submitted "
        "system tokens/s within the tolerance (1% by default).",
        "Explain the difference or resubmit numbers the run's events support.",
    ),
    _portal(
        "recounted-tpot-p90",
        "Re-counted TPOT P90",
        "§4.1",
        Stage.RECOUNT,
        _ERROR,
        "TPOT P90 computed from the events' timestamps and re-counted tokens must match "
        "the submitted value within the tolerance (2% by default).",
        "Explain the difference or resubmit numbers the run's events support.",
    ),
    _portal(
        "recounted-tps-per-user",
        "Re-counted tokens/s per user",
        "§4.1",
        Stage.RECOUNT,
        _ERROR,
        "Tokens/s per user (1000 / TPOT P90 in ms) from the re-count must match the "
        "submitted value within the tolerance (2% by default).",
        "Explain the difference or resubmit numbers the run's events support.",
    ),
    _portal(
        "recounted-ttft-p90",
        "Re-computed TTFT P90",
        "§4.1",
        Stage.RECOUNT,
        _ERROR,
        "TTFT P90 computed from the events' timestamps must match the submitted value "
        "within the tolerance (1% by default).",
        "Explain the difference or resubmit numbers the run's events support.",
    ),
    _portal(
        "recounted-sample-accounting",
        "Re-counted samples",
        "§4.1",
        Stage.RECOUNT,
        _ERROR,
        "The completed samples in events.jsonl must be as many as the summary reports.",
        "Submit the events.jsonl of the run the summary was made from.",
    ),
    _portal(
        "tpot-valid-samples",
        "Valid TPOT samples",
        "§1.1",
        Stage.RECOUNT,
        Severity.INFO,
        "TPOT P90 is over the valid per-response samples, positive and finite; the official "
        "client keeps non-positive ones (a response whose last chunk came with its first), "
        "so both P90s are shown when any are left out.",
    ),
    _portal(
        "fake-first-token",
        "Genuine first token",
        "§4.1",
        Stage.RECOUNT,
        Severity.WARNING,
        "A first chunk with nothing visible in it (whitespace, zero-width or control "
        "characters only) starts the TTFT clock before the first real token. The scan is "
        "evidence for a reviewer (§12), with the share and the chunks themselves; "
        "punctuation and symbols (**, {, a code fence) are ordinary first tokens.",
        "TTFT must be measured to the first genuine token.",
    ),
    _portal(
        "duplicated-output",
        "Duplicated or padded output",
        "§1.3",
        Stage.RECOUNT,
        Severity.WARNING,
        "Only output the model produced counts: the same text repeated across content, "
        "reasoning and tool calls, or long runs of whitespace padding a response, inflate "
        "throughput and invalidate the point. The scan says how each response repeats "
        "itself; a reviewer judges (§12).",
        "Only the output the model produced counts; padding invalidates the point.",
    ),
    _portal(
        "repetitive-output",
        "Mostly repetitive output",
        "§1.3",
        Stage.RECOUNT,
        Severity.INFO,
        "Responses that compress to a few percent of their size are mostly repetition. A "
        "model's own loop is real output and counts; padding by the endpoint would not. "
        "Listed for a reviewer, not judged.",
    ),
    _portal(
        "truncated-responses",
        "Truncated responses",
        "§1.3",
        Stage.RECOUNT,
        Severity.WARNING,
        "Responses that end at the length limit are reported; more than 5% of them is a "
        "warning for the reviewers.",
    ),
    _portal(
        "events-summary-hash",
        "Events are the summary's",
        "§9.5",
        Stage.RECOUNT,
        _ERROR,
        "When the summary names the sha256 of its event log (events_sha256), the submitted "
        "events.jsonl must be that file; a summary without it is tied to the events by "
        "their counts only, which the page says.",
        "Submit the events.jsonl the client wrote for this run, unedited.",
    ),
    _portal(
        "events-summary-counts",
        "Events and summary agree on requests",
        "§9.5",
        Stage.RECOUNT,
        _ERROR,
        "The requests issued and failed in events.jsonl must be as many as the summary reports.",
        "Submit the events.jsonl of the run the summary was made from.",
    ),
    _portal(
        "events-summary-duration",
        "Events and summary agree on duration",
        "§9.5",
        Stage.RECOUNT,
        _ERROR,
        "The tracked window in events.jsonl (first tracked issue to last tracked "
        "completion) must match the summary's duration within the timing tolerance.",
        "Submit the events.jsonl of the run the summary was made from.",
    ),
    _portal(
        "summary-point-seeds",
        "The run used the declared seeds",
        "§4.3",
        Stage.RECOUNT,
        _ERROR,
        "The seeds the summary's run_config says the client used (scheduler and "
        "dataloader) must be the ones point.yaml declares (scheduler_rng_seed, "
        "sample_index_rng_seed).",
        "Run the point with the seed set it declares, or declare the seeds it ran with.",
    ),
    _portal(
        "events-dataset",
        "The events ran on the declared dataset",
        "§7.1",
        Stage.RECOUNT,
        _ERROR,
        "Where the portal has a copy of the dataset a point declares (point.yaml dataset), "
        "every tracked prompt in the events must be one of its samples (warm-up requests, "
        "before tracking starts, are not compared). Agentic points replay salted "
        "conversations and are not compared.",
        "Run the point on the declared dataset, or declare the dataset it ran on.",
    ),
    _portal(
        "server-usage",
        "The server's own token count",
        "§1.3",
        Stage.RECOUNT,
        Severity.INFO,
        "Where the events carry the server's usage counts (usage.completion_tokens on a "
        "response), they are set beside the reference tokenizer's count of the same "
        "responses. The rules count with the reference tokenizer; a server that counts "
        "otherwise (special tokens, reasoning, a different template) is worth a reviewer's "
        "look, not a verdict.",
    ),
    _portal(
        "steady-state-detected",
        "Steady state in the events",
        "§2.6",
        Stage.RECOUNT,
        Severity.INFO,
        "A fixed-concurrency point's steady state, found in its events as the official "
        "diagnostics find it (super-passes, trend and variation gates, the first plateau, "
        "level shifts and drift; the method and its settings are on the page). Gated on TTFT "
        "and TPOT P50 and P95 as the diagnostics gate, where R §4.4's table names P90.",
    ),
    _portal(
        "steady-state-declared",
        "Declared steady state matches the events",
        "§2.5",
        Stage.RECOUNT,
        Severity.WARNING,
        "The steady_state block point.yaml declares (status, verdict, window, per-metric "
        "state) should be what the events show. Nothing copies the detector's result into "
        "point.yaml, so a block filled by hand can say more than the run did; a detector with "
        "other settings can also disagree, which is a reviewer's judgement.",
        "Run the official diagnostics (or endpoints-harness analyze) on the point's "
        "events.jsonl and declare what they find.",
    ),
    _portal(
        "steady-state-super-pass",
        "Super-passes of the benchmark's size",
        "§2.1",
        Stage.RECOUNT,
        Severity.WARNING,
        "A super-pass is one full pass over the dataset unless the benchmark definition "
        "sets another size; the submitter does not choose it. The events are analysed with "
        "the benchmark's size, and a point.yaml that declares another (its window's "
        "super_pass_size, or runtime_settings.min_sample_count) is a warning. Where the "
        "portal knows no size for the dataset, the declared one is used and said so.",
        "Run the diagnostics with --superpass-size set to the benchmark's super-pass and "
        "declare the window they find.",
    ),
    _portal(
        "steady-state-window-facts",
        "Declared window is in the events",
        "§2.2",
        Stage.RECOUNT,
        _ERROR,
        "The declared window's super-passes must exist in the events, and its sample count "
        "and issue-time span (measured against §6.2) must be what those super-passes hold.",
        "Declare the window's n_samples and duration_s from the run's own events.",
    ),
    _portal(
        "steady-state-window-metrics",
        "The point's numbers have a basis",
        "§2.2",
        Stage.RECOUNT,
        Severity.WARNING,
        "A windowable point's official numbers are the window's (§2.3: the whole run's "
        "`total` is supplementary). The summary's TTFT P90, TPOT P90 and system tokens/s are "
        "compared with both: the whole run's numbers on a windowable point, or a number that "
        "is neither, is a warning with the window's numbers beside the reported ones.",
        "Report the steady-state window's metrics, as the events give them.",
    ),
    _portal(
        "events-malformed",
        "Readable run events",
        "§1.3",
        Stage.RECOUNT,
        Severity.WARNING,
        "Lines of events.jsonl that cannot be read are skipped and reported.",
        "Submit the events.jsonl the client wrote, unedited.",
    ),
    _portal(
        "tokenizer-missing",
        "Reference tokenizer",
        "§1.3",
        Stage.RECOUNT,
        Severity.WARNING,
        "Without the benchmark model's reference tokenizer nothing can be re-counted; the "
        "point is reported as not re-counted rather than as passing.",
        "An operator adds the model to the tokenizer registry "
        "(ENDPOINTS_PORTAL_TOKENIZER_REGISTRY).",
    ),
    # Running a point again.
    _portal(
        "reproduction-margin",
        "Reproduction within the margin",
        "§11.4",
        Stage.REPRODUCTION,
        Severity.WARNING,
        "A reproduction run of a point must measure system tokens/s and tokens/s per user "
        "(e2e avg interactivity on an agentic point) no more than the reproducibility "
        "margin (10% by default; 5% on the same system) below the submitted values; "
        "measuring more is not a problem.",
        "Check the endpoint, its configuration and load, then reproduce again; the "
        "submitter may be asked to explain the difference.",
    ),
    _portal(
        "reproduction-latency",
        "Reproduced latency beside the submitted",
        "§11.4",
        Stage.REPRODUCTION,
        Severity.WARNING,
        "A reproduction's TTFT and TPOT at P50, P90 and P99 are compared with the submitted "
        "run's within a band (10% by default), and their histograms by the largest gap "
        "between their cumulative shares (0.15 by default). This is evidence for the "
        "reviewers: a reproducibility objection may not rest on latency alone.",
        "Look at the endpoint's configuration and load; ask the submitter about the "
        "difference if throughput also misses.",
    ),
)


def portal_rule(rule_id: str) -> Rule:
    """The portal's own rule with this id (KeyError for an uncatalogued one)."""
    return _PORTAL_BY_ID[rule_id]


_PORTAL_BY_ID = {rule.id: rule for rule in PORTAL_RULES}


@cache
def official_rules() -> tuple[Rule, ...]:
    """The official checker's rules as its own catalogue names them."""
    rules = []
    for rule_id, entry in sorted(official_messages.catalog().items()):
        if rule_id.startswith("_"):  # shared wording, not a rule
            continue
        fixes = [m.fix for m in entry.messages.values() if m.fix]
        rules.append(
            Rule(
                id=rule_id,
                title=entry.title,
                clause=entry.spec,
                stage=Stage.CHECKS,
                source=Source.OFFICIAL,
                explanation="Decided and worded by the official checker "
                "(endpoints-submission-cli); the portal passes its findings through unchanged.",
                severity=None,
                fix=fixes[0] if fixes else None,
            )
        )
    return tuple(rules)


@cache
def catalogue() -> dict[str, Rule]:
    """Every rule by id, in the order a submission meets them (within the automated
    checks, the official rules first)."""
    stages = list(Stage)
    ordered = sorted(
        (*official_rules(), *PORTAL_RULES), key=lambda r: stages.index(r.stage)
    )  # sorted() is stable: official before portal, each in its own order
    return {rule.id: rule for rule in ordered}


def is_catalogued(rule_id: str) -> bool:
    return rule_id in catalogue()
