# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_rdq_envelope_global_optspecs
    string join \n color= q/quiet j/jobs= h/help V/version
end

function __fish_rdq_envelope_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_rdq_envelope_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_rdq_envelope_using_subcommand
    set -l cmd (__fish_rdq_envelope_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c rdq-envelope -n "__fish_rdq_envelope_needs_command" -l color -d 'When to colour the stats tables and validate\'s diagnostics: auto (standard output is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow), always, never' -r -f -a "auto\t'Colour standard output when it is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow'
always\t'Colour, wherever the output goes (a pipe, a file given with -o)'
never\t'Never colour'"
complete -c rdq-envelope -n "__fish_rdq_envelope_needs_command" -s j -l jobs -d 'Worker threads, 1 to 256 (commands that read envelopes; default: $RDQ_ENVELOPE_JOBS, else the machine\'s available parallelism)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_needs_command" -s q -l quiet -d 'Print nothing on standard error but errors (commands that read envelopes, and gen)'
complete -c rdq-envelope -n "__fish_rdq_envelope_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rdq-envelope -n "__fish_rdq_envelope_needs_command" -s V -l version -d 'Print version'
complete -c rdq-envelope -n "__fish_rdq_envelope_needs_command" -f -a "validate" -d 'Check every line against the envelope rules (docs/envelope.md) and report each broken rule'
complete -c rdq-envelope -n "__fish_rdq_envelope_needs_command" -f -a "gen" -d 'Write deterministic synthetic envelopes, DLQ-shaped, for benchmarks and pipeline tests'
complete -c rdq-envelope -n "__fish_rdq_envelope_needs_command" -f -a "migrate" -d 'Write every valid line as another envelope_version (docs/migrations.md), losslessly'
complete -c rdq-envelope -n "__fish_rdq_envelope_needs_command" -f -a "redrive" -d 'Turn DEAD envelopes into resubmittable ones: status PENDING, attempt_count 0, redrive_count + 1, next_attempt_at the time given, lease_expires_at null, attempts kept'
complete -c rdq-envelope -n "__fish_rdq_envelope_needs_command" -f -a "dedupe" -d 'Keep one copy per id, byte-identical and in input order; count the dropped copies'
complete -c rdq-envelope -n "__fish_rdq_envelope_needs_command" -f -a "sample" -d 'Keep a uniform random sample of N valid lines (N per queue with --by queue), in input order'
complete -c rdq-envelope -n "__fish_rdq_envelope_needs_command" -f -a "filter" -d 'Write the valid lines that match every predicate, byte-identical to the input'
complete -c rdq-envelope -n "__fish_rdq_envelope_needs_command" -f -a "export" -d 'Write one row per valid envelope, with the columns chosen, as CSV, TSV or Parquet'
complete -c rdq-envelope -n "__fish_rdq_envelope_needs_command" -f -a "stats" -d 'Count the valid envelopes per group, with attempt and redrive histograms, the created_at range, the top error types and the arrivals per day'
complete -c rdq-envelope -n "__fish_rdq_envelope_needs_command" -f -a "show" -d 'Print the envelope with an ID, pretty (only white space changes), and with --payload its decoded payload'
complete -c rdq-envelope -n "__fish_rdq_envelope_needs_command" -f -a "schema" -d 'Print the JSON Schema (draft 2020-12) of an envelope version (default: the newest)'
complete -c rdq-envelope -n "__fish_rdq_envelope_needs_command" -f -a "compliance" -d 'The storage plugins\' round-trip kit: run a plugin\'s write and read commands over the fixtures and report every difference (run), or write the fixture set (fixtures)'
complete -c rdq-envelope -n "__fish_rdq_envelope_needs_command" -f -a "completions" -d 'Print the shell completion script for SHELL'
complete -c rdq-envelope -n "__fish_rdq_envelope_needs_command" -f -a "man" -d 'Print the manual page (roff): `rdq-envelope man | man -l -`'
complete -c rdq-envelope -n "__fish_rdq_envelope_needs_command" -f -a "convert" -d 'Convert envelopes between JSON Lines and protobuf (docs/proto.md): --to proto writes each valid line as its rdq.envelope.v1/v2 message, --from proto each message as its canonical JSON line'
complete -c rdq-envelope -n "__fish_rdq_envelope_needs_command" -f -a "batch" -d 'Run validate, migrate or filter over every shard of a folder into another, resumably'
complete -c rdq-envelope -n "__fish_rdq_envelope_needs_command" -f -a "explain" -d 'Explain an error or warning code: the rule, where it is reported, a line that gets it and how to fix it (as `rustc --explain` does); --list lists every code'
complete -c rdq-envelope -n "__fish_rdq_envelope_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand validate" -l require-version -d 'Reject lines of any other envelope_version (UNSUPPORTED_VERSION). Not with --submit' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand validate" -l max-envelope-bytes -d 'The envelope size limit in bytes for queues without a limit of their own (PAYLOAD_TOO_LARGE)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand validate" -l queue-limit -d 'A queue\'s own size limit in bytes, replacing --max-envelope-bytes for it (repeatable; over --queue-limits for the same queue)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand validate" -l queue-limits -d 'Queues\' own size limits from a file: TOML (`"billing.invoices" = 2097152`, a line per queue) or a JSON object (`{"billing.invoices": 2097152}`)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand validate" -l max-line-bytes -d 'The reader cap: a line longer than this many bytes is LINE_TOO_LONG and never held in memory whole' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand validate" -s j -l jobs -d 'Worker threads, at most 256 (default: $RDQ_ENVELOPE_JOBS, else the machine\'s available parallelism). Output is the same, byte for byte, whatever the number' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand validate" -l max-errors -d 'Stop after N rejected lines: the run ends right after the Nth, in input order, with status 1 and the books of the lines up to it (the lines after it are not read)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand validate" -l format -d 'How diagnostics are written: `SOURCE:LINE: POINTER: CODE: message` rows, or one JSON object per invalid line (default: from the -o name, .txt, .log, .json, .jsonl or .ndjson, else human; another ending needs --format)' -r -f -a "human\t''
json\t''"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand validate" -l valid-out -d 'Also write the valid lines, byte-identical to the input' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand validate" -s o -l output -d 'The primary output (default: standard output). Regular files (and s3://BUCKET/KEY objects) are written atomically' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand validate" -l rejects -d 'Write every rejected line as a JSON record with its errors and raw bytes' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand validate" -l summary -d 'Write the run\'s counts as a JSON object' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand validate" -l compress -d 'Compress -o this way, whatever its name says (by default a name ending in .zst or .gz is compressed accordingly)' -r -f -a "zstd\t'zstd, multi-threaded'
gzip\t'gzip'
none\t'Plain bytes, whatever the name'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand validate" -l zstd-frame -d 'zstd outputs are written in the seekable format, in independent frames of at most SIZE of input each (default: 4MiB): 64KiB to 1GiB, in bytes or with a unit (KiB, MiB, GiB, KB, MB, GB). Smaller frames let a reader start nearer any line; larger ones compress a little better' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand validate" -l color -d 'When to colour the stats tables and validate\'s diagnostics: auto (standard output is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow), always, never' -r -f -a "auto\t'Colour standard output when it is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow'
always\t'Colour, wherever the output goes (a pipe, a file given with -o)'
never\t'Never colour'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand validate" -l submit -d 'Judge lines as the submit subset: what a client sends before the server assigns identity and state (docs/envelope.md#the-submit-subset)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand validate" -l warnings -d 'Also report the warnings (ID_TIME_MISMATCH, CREATED_AFTER_START), valid lines included'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand validate" -s q -l quiet -d 'Print nothing on standard error but errors (no summary line, no progress bar)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand validate" -l line-buffered -d 'Flush every output line as soon as it is judged (slower); otherwise output is written in large blocks, and within 50 ms of a line when the input goes quiet'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand validate" -l progress -d 'Draw the progress bar even when standard error is not a terminal (not with --quiet)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand validate" -l stats -d 'After the closing line, the rejected lines counted by code (and valid lines by warning), most first, on standard error, even with --quiet (validate prints them on a terminal unasked)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand validate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand gen" -l count -d 'How many lines to write (or --size)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand gen" -l size -d 'About how many bytes to write, instead of --count: whole lines, as many as come nearest to SIZE (at least one). Bytes, or with a unit: KB, MB, GB, TB (powers of 1000), KiB, MiB, GiB, TiB (powers of 1024), as in 500MB, 1.5GB, 1GiB' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand gen" -l seed -d 'The seed: the same seed and options give the same bytes on every machine' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand gen" -l version -d 'The envelope_version to write, 1 or 2 (default: the newest). Not with --format chokaq' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand gen" -l invalid-rate -d 'The share of lines (0 to 1) that carry one realistic defect each (default: 0). Not with --format chokaq' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand gen" -l stack-bytes -d 'Pads every retryable or permanent failure\'s stack trace to about N bytes (2048 to 65536, the stack limit) of Java frames, for a corpus of long, escape-heavy strings. Not with --format chokaq' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand gen" -l format -d 'What to write: rdq envelopes, or ChokaQ table rows for `migrate --from chokaq`' -r -f -a "rdq\t''
chokaq\t''"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand gen" -l table -d 'With --format chokaq: rows of this table only (default: DLQ, Hot and Archive rows mixed)' -r -f -a "hot\t'JobsHot: active jobs'
archive\t'JobsArchive: jobs that succeeded'
dlq\t'JobsDLQ: dead letters'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand gen" -s o -l output -d 'Where to write (default: standard output). Regular files are written atomically' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand gen" -l zstd-frame -d 'A zstd -o (a name ending in .zst) is written in the seekable format, in frames of at most SIZE of input each (default: 4MiB): 64KiB to 1GiB, as the other commands take it' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand gen" -l color -d 'When to colour the stats tables and validate\'s diagnostics: auto (standard output is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow), always, never' -r -f -a "auto\t'Colour standard output when it is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow'
always\t'Colour, wherever the output goes (a pipe, a file given with -o)'
never\t'Never colour'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand gen" -s j -l jobs -d 'Worker threads, 1 to 256 (commands that read envelopes; default: $RDQ_ENVELOPE_JOBS, else the machine\'s available parallelism)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand gen" -s q -l quiet -d 'Print nothing on standard error but errors (no closing line)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand gen" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand migrate" -l to -d 'The envelope_version to write (default: the newest supported)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand migrate" -l from -d 'What the input lines are: rdq envelopes, or ChokaQ table rows (one JSON object per row, keyed by column name; docs/chokaq.md)' -r -f -a "rdq\t''
chokaq\t''"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand migrate" -l chokaq-table -d 'The ChokaQ table of every row (default: told per row from FailureReason, FinishedAtUtc or Status)' -r -f -a "hot\t'JobsHot: active jobs'
archive\t'JobsArchive: jobs that succeeded'
dlq\t'JobsDLQ: dead letters'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand migrate" -l chokaq-zombie-timeout -d 'Seconds after a running ChokaQ job\'s last heartbeat at which its lease expires (default with --from chokaq: 600)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand migrate" -l chokaq-max-payload-bytes -d 'ChokaQ\'s payload limit in UTF-8 bytes: a payload over it gets the CHOKAQ_LIMIT warning (default with --from chokaq: 1000000)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand migrate" -l max-envelope-bytes -d 'The envelope size limit in bytes for queues without a limit of their own (PAYLOAD_TOO_LARGE)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand migrate" -l queue-limit -d 'A queue\'s own size limit in bytes, replacing --max-envelope-bytes for it (repeatable; over --queue-limits for the same queue)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand migrate" -l queue-limits -d 'Queues\' own size limits from a file: TOML (`"billing.invoices" = 2097152`, a line per queue) or a JSON object (`{"billing.invoices": 2097152}`)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand migrate" -l max-line-bytes -d 'The reader cap: a line longer than this many bytes is LINE_TOO_LONG and never held in memory whole' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand migrate" -s j -l jobs -d 'Worker threads, at most 256 (default: $RDQ_ENVELOPE_JOBS, else the machine\'s available parallelism). Output is the same, byte for byte, whatever the number' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand migrate" -l max-errors -d 'Stop after N rejected lines: the run ends right after the Nth, in input order, with status 1 and the books of the lines up to it (the lines after it are not read)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand migrate" -l warnings-out -d 'Write the warnings of the lines written as JSON Lines, one record per line that has warnings (the record of validate --format json, with "errors": [])' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand migrate" -s o -l output -d 'The primary output (default: standard output). Regular files (and s3://BUCKET/KEY objects) are written atomically' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand migrate" -l rejects -d 'Write every rejected line as a JSON record with its errors and raw bytes' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand migrate" -l summary -d 'Write the run\'s counts as a JSON object' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand migrate" -l compress -d 'Compress -o this way, whatever its name says (by default a name ending in .zst or .gz is compressed accordingly)' -r -f -a "zstd\t'zstd, multi-threaded'
gzip\t'gzip'
none\t'Plain bytes, whatever the name'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand migrate" -l zstd-frame -d 'zstd outputs are written in the seekable format, in independent frames of at most SIZE of input each (default: 4MiB): 64KiB to 1GiB, in bytes or with a unit (KiB, MiB, GiB, KB, MB, GB). Smaller frames let a reader start nearer any line; larger ones compress a little better' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand migrate" -l color -d 'When to colour the stats tables and validate\'s diagnostics: auto (standard output is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow), always, never' -r -f -a "auto\t'Colour standard output when it is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow'
always\t'Colour, wherever the output goes (a pipe, a file given with -o)'
never\t'Never colour'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand migrate" -l warnings -d 'Print the warnings of the lines written (ID_TIME_MISMATCH, CREATED_AFTER_START) on standard error, in the human form of validate'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand migrate" -s q -l quiet -d 'Print nothing on standard error but errors (no summary line, no progress bar)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand migrate" -l line-buffered -d 'Flush every output line as soon as it is judged (slower); otherwise output is written in large blocks, and within 50 ms of a line when the input goes quiet'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand migrate" -l progress -d 'Draw the progress bar even when standard error is not a terminal (not with --quiet)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand migrate" -l stats -d 'After the closing line, the rejected lines counted by code (and valid lines by warning), most first, on standard error, even with --quiet (validate prints them on a terminal unasked)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand migrate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand redrive" -l at -d 'When the redriven tasks are due again (next_attempt_at), or with --rate or --spread the first may be: 2024-05-01T12:00:00.000Z, 2024-05-01 (midnight UTC), RFC 3339 with any offset, or 2h, 3d, 90m (before now)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand redrive" -l queue -d 'Send the redriven tasks to this queue (its size limit applies)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand redrive" -l rate -d 'At most N tasks due per second, minute or hour (N/s, N/m, N/h), in input order' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand redrive" -l spread -d 'Spread the due times over this long (90s, 30m, 2h, 1d), each task\'s from its ID' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand redrive" -l max-redrives -d 'Reject with REDRIVE_LIMIT a task already redriven N times or more' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand redrive" -l max-envelope-bytes -d 'The envelope size limit in bytes for queues without a limit of their own (PAYLOAD_TOO_LARGE)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand redrive" -l queue-limit -d 'A queue\'s own size limit in bytes, replacing --max-envelope-bytes for it (repeatable; over --queue-limits for the same queue)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand redrive" -l queue-limits -d 'Queues\' own size limits from a file: TOML (`"billing.invoices" = 2097152`, a line per queue) or a JSON object (`{"billing.invoices": 2097152}`)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand redrive" -l max-line-bytes -d 'The reader cap: a line longer than this many bytes is LINE_TOO_LONG and never held in memory whole' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand redrive" -s j -l jobs -d 'Worker threads, at most 256 (default: $RDQ_ENVELOPE_JOBS, else the machine\'s available parallelism). Output is the same, byte for byte, whatever the number' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand redrive" -l max-errors -d 'Stop after N rejected lines: the run ends right after the Nth, in input order, with status 1 and the books of the lines up to it (the lines after it are not read)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand redrive" -s o -l output -d 'The primary output (default: standard output). Regular files (and s3://BUCKET/KEY objects) are written atomically' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand redrive" -l rejects -d 'Write every rejected line as a JSON record with its errors and raw bytes' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand redrive" -l summary -d 'Write the run\'s counts as a JSON object' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand redrive" -l compress -d 'Compress -o this way, whatever its name says (by default a name ending in .zst or .gz is compressed accordingly)' -r -f -a "zstd\t'zstd, multi-threaded'
gzip\t'gzip'
none\t'Plain bytes, whatever the name'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand redrive" -l zstd-frame -d 'zstd outputs are written in the seekable format, in independent frames of at most SIZE of input each (default: 4MiB): 64KiB to 1GiB, in bytes or with a unit (KiB, MiB, GiB, KB, MB, GB). Smaller frames let a reader start nearer any line; larger ones compress a little better' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand redrive" -l color -d 'When to colour the stats tables and validate\'s diagnostics: auto (standard output is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow), always, never' -r -f -a "auto\t'Colour standard output when it is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow'
always\t'Colour, wherever the output goes (a pipe, a file given with -o)'
never\t'Never colour'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand redrive" -l now -d 'They are due now: the time the run starts (the default)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand redrive" -l dry-run -d 'Write nothing: print what would be redriven (per queue, when) and rejected'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand redrive" -s q -l quiet -d 'Print nothing on standard error but errors (no summary line, no progress bar)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand redrive" -l line-buffered -d 'Flush every output line as soon as it is judged (slower); otherwise output is written in large blocks, and within 50 ms of a line when the input goes quiet'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand redrive" -l progress -d 'Draw the progress bar even when standard error is not a terminal (not with --quiet)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand redrive" -l stats -d 'After the closing line, the rejected lines counted by code (and valid lines by warning), most first, on standard error, even with --quiet (validate prints them on a terminal unasked)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand redrive" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand dedupe" -l keep -d 'Which copy of an ID to keep: the one with the most history (greatest redrive_count, then most attempts, then latest last finished_at, then the later line), or the first' -r -f -a "newest\t''
first\t''"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand dedupe" -l max-envelope-bytes -d 'The envelope size limit in bytes for queues without a limit of their own (PAYLOAD_TOO_LARGE)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand dedupe" -l queue-limit -d 'A queue\'s own size limit in bytes, replacing --max-envelope-bytes for it (repeatable; over --queue-limits for the same queue)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand dedupe" -l queue-limits -d 'Queues\' own size limits from a file: TOML (`"billing.invoices" = 2097152`, a line per queue) or a JSON object (`{"billing.invoices": 2097152}`)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand dedupe" -l max-line-bytes -d 'The reader cap: a line longer than this many bytes is LINE_TOO_LONG and never held in memory whole' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand dedupe" -s j -l jobs -d 'Worker threads, at most 256 (default: $RDQ_ENVELOPE_JOBS, else the machine\'s available parallelism). Output is the same, byte for byte, whatever the number' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand dedupe" -l max-errors -d 'Stop after N rejected lines: the run ends right after the Nth, in input order, with status 1 and the books of the lines up to it (the lines after it are not read)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand dedupe" -l dropped -d 'Write the dropped copies to FILE' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand dedupe" -s o -l output -d 'The primary output (default: standard output). Regular files (and s3://BUCKET/KEY objects) are written atomically' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand dedupe" -l rejects -d 'Write every rejected line as a JSON record with its errors and raw bytes' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand dedupe" -l summary -d 'Write the run\'s counts as a JSON object' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand dedupe" -l compress -d 'Compress -o this way, whatever its name says (by default a name ending in .zst or .gz is compressed accordingly)' -r -f -a "zstd\t'zstd, multi-threaded'
gzip\t'gzip'
none\t'Plain bytes, whatever the name'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand dedupe" -l zstd-frame -d 'zstd outputs are written in the seekable format, in independent frames of at most SIZE of input each (default: 4MiB): 64KiB to 1GiB, in bytes or with a unit (KiB, MiB, GiB, KB, MB, GB). Smaller frames let a reader start nearer any line; larger ones compress a little better' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand dedupe" -l color -d 'When to colour the stats tables and validate\'s diagnostics: auto (standard output is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow), always, never' -r -f -a "auto\t'Colour standard output when it is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow'
always\t'Colour, wherever the output goes (a pipe, a file given with -o)'
never\t'Never colour'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand dedupe" -s q -l quiet -d 'Print nothing on standard error but errors (no summary line, no progress bar)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand dedupe" -l line-buffered -d 'Flush every output line as soon as it is judged (slower); otherwise output is written in large blocks, and within 50 ms of a line when the input goes quiet'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand dedupe" -l progress -d 'Draw the progress bar even when standard error is not a terminal (not with --quiet)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand dedupe" -l stats -d 'After the closing line, the rejected lines counted by code (and valid lines by warning), most first, on standard error, even with --quiet (validate prints them on a terminal unasked)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand dedupe" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand sample" -l seed -d 'The seed of the random choice: the same seed and input give the same sample, for any -j. Without it, a seed is drawn and printed on standard error' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand sample" -l by -d 'Sample N lines of every queue rather than N in all' -r -f -a "queue\t''"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand sample" -l max-envelope-bytes -d 'The envelope size limit in bytes for queues without a limit of their own (PAYLOAD_TOO_LARGE)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand sample" -l queue-limit -d 'A queue\'s own size limit in bytes, replacing --max-envelope-bytes for it (repeatable; over --queue-limits for the same queue)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand sample" -l queue-limits -d 'Queues\' own size limits from a file: TOML (`"billing.invoices" = 2097152`, a line per queue) or a JSON object (`{"billing.invoices": 2097152}`)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand sample" -l max-line-bytes -d 'The reader cap: a line longer than this many bytes is LINE_TOO_LONG and never held in memory whole' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand sample" -s j -l jobs -d 'Worker threads, at most 256 (default: $RDQ_ENVELOPE_JOBS, else the machine\'s available parallelism). Output is the same, byte for byte, whatever the number' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand sample" -l max-errors -d 'Stop after N rejected lines: the run ends right after the Nth, in input order, with status 1 and the books of the lines up to it (the lines after it are not read)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand sample" -s o -l output -d 'The primary output (default: standard output). Regular files (and s3://BUCKET/KEY objects) are written atomically' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand sample" -l rejects -d 'Write every rejected line as a JSON record with its errors and raw bytes' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand sample" -l summary -d 'Write the run\'s counts as a JSON object' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand sample" -l compress -d 'Compress -o this way, whatever its name says (by default a name ending in .zst or .gz is compressed accordingly)' -r -f -a "zstd\t'zstd, multi-threaded'
gzip\t'gzip'
none\t'Plain bytes, whatever the name'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand sample" -l zstd-frame -d 'zstd outputs are written in the seekable format, in independent frames of at most SIZE of input each (default: 4MiB): 64KiB to 1GiB, in bytes or with a unit (KiB, MiB, GiB, KB, MB, GB). Smaller frames let a reader start nearer any line; larger ones compress a little better' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand sample" -l color -d 'When to colour the stats tables and validate\'s diagnostics: auto (standard output is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow), always, never' -r -f -a "auto\t'Colour standard output when it is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow'
always\t'Colour, wherever the output goes (a pipe, a file given with -o)'
never\t'Never colour'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand sample" -s q -l quiet -d 'Print nothing on standard error but errors (no summary line, no progress bar)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand sample" -l line-buffered -d 'Flush every output line as soon as it is judged (slower); otherwise output is written in large blocks, and within 50 ms of a line when the input goes quiet'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand sample" -l progress -d 'Draw the progress bar even when standard error is not a terminal (not with --quiet)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand sample" -l stats -d 'After the closing line, the rejected lines counted by code (and valid lines by warning), most first, on standard error, even with --quiet (validate prints them on a terminal unasked)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand sample" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -l queue -d 'The queue matches GLOB (repeatable)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -l handler -d 'handler_ref matches GLOB (repeatable)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -l status -d 'The status is S: PENDING, IN_FLIGHT, SUCCEEDED, DEAD or CANCELLED, in any letter case (repeatable)' -r -f -a "PENDING\t''
IN_FLIGHT\t''
SUCCEEDED\t''
DEAD\t''
CANCELLED\t''"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -l error-type -d 'Some attempt\'s error.type matches GLOB (repeatable)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -l last-error-type -d 'The last attempt\'s error.type matches GLOB (repeatable)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -l outcome -d 'The last attempt\'s outcome is O: SUCCESS, RETRYABLE_FAILURE, PERMANENT_FAILURE or LEASE_EXPIRED, in any letter case (repeatable)' -r -f -a "SUCCESS\t''
RETRYABLE_FAILURE\t''
PERMANENT_FAILURE\t''
LEASE_EXPIRED\t''"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -l since -d 'created_at is at or after TS: 2024-05-01T12:00:00.000Z, 2024-05-01 (midnight UTC), RFC 3339 with any offset, or 2h, 3d, 90m (that long before now)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -l until -d 'created_at is before TS (any form --since takes)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -l failed-since -d 'The last attempt\'s finished_at is at or after TS (any form --since takes)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -l failed-until -d 'The last attempt\'s finished_at is before TS' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -l fingerprint -d 'The last error\'s fingerprint (stats --by fingerprint) is HEX (repeatable)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -l error-message -d 'Some attempt\'s error.message matches REGEX, unanchored, like grep -E (repeatable)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -l where -d 'A jq expression: keep the envelope when it outputs a value other than false and null before any error, as jq \'select(EXPR)\' does. Runs only on the lines the other predicates kept' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -l where-timeout -d 'With --where: end the run (status 2) when one line has been evaluated for longer than this many seconds [default: 10]; 0 turns the limit off' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -l where-max-memory -d 'With --where: end the run (status 2) when the process holds more than this much memory, in MiB [default: 4096]; 0 turns the limit off' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -l limit -d 'Stop after N matching lines (the rest of the input is not read)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -l id -d 'The id is exactly ID (repeatable)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -l header -d 'Header KEY\'s value matches GLOB; rdq.source and rdq.submitted_by also match a v2 origin (repeatable; each must hold)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -l min-attempts -d 'At least N attempt records (the whole history across redrives)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -l max-attempts -d 'At most N attempt records' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -l min-redrives -d 'At least N redrives' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -l payload-contains -d 'The decoded payload contains TEXT (repeatable)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -l max-envelope-bytes -d 'The envelope size limit in bytes for queues without a limit of their own (PAYLOAD_TOO_LARGE)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -l queue-limit -d 'A queue\'s own size limit in bytes, replacing --max-envelope-bytes for it (repeatable; over --queue-limits for the same queue)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -l queue-limits -d 'Queues\' own size limits from a file: TOML (`"billing.invoices" = 2097152`, a line per queue) or a JSON object (`{"billing.invoices": 2097152}`)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -l max-line-bytes -d 'The reader cap: a line longer than this many bytes is LINE_TOO_LONG and never held in memory whole' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -s j -l jobs -d 'Worker threads, at most 256 (default: $RDQ_ENVELOPE_JOBS, else the machine\'s available parallelism). Output is the same, byte for byte, whatever the number' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -l max-errors -d 'Stop after N rejected lines: the run ends right after the Nth, in input order, with status 1 and the books of the lines up to it (the lines after it are not read)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -s o -l output -d 'The primary output (default: standard output). Regular files (and s3://BUCKET/KEY objects) are written atomically' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -l rejects -d 'Write every rejected line as a JSON record with its errors and raw bytes' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -l summary -d 'Write the run\'s counts as a JSON object' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -l compress -d 'Compress -o this way, whatever its name says (by default a name ending in .zst or .gz is compressed accordingly)' -r -f -a "zstd\t'zstd, multi-threaded'
gzip\t'gzip'
none\t'Plain bytes, whatever the name'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -l zstd-frame -d 'zstd outputs are written in the seekable format, in independent frames of at most SIZE of input each (default: 4MiB): 64KiB to 1GiB, in bytes or with a unit (KiB, MiB, GiB, KB, MB, GB). Smaller frames let a reader start nearer any line; larger ones compress a little better' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -l color -d 'When to colour the stats tables and validate\'s diagnostics: auto (standard output is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow), always, never' -r -f -a "auto\t'Colour standard output when it is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow'
always\t'Colour, wherever the output goes (a pipe, a file given with -o)'
never\t'Never colour'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -l invert -d 'Emit the valid lines that do not match instead'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -l count -d 'Print only the number of matching lines'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -s q -l quiet -d 'Print nothing on standard error but errors (no summary line, no progress bar)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -l line-buffered -d 'Flush every output line as soon as it is judged (slower); otherwise output is written in large blocks, and within 50 ms of a line when the input goes quiet'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -l progress -d 'Draw the progress bar even when standard error is not a terminal (not with --quiet)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -l stats -d 'After the closing line, the rejected lines counted by code (and valid lines by warning), most first, on standard error, even with --quiet (validate prints them on a terminal unasked)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand filter" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand export" -l fields -d 'The columns, comma-separated, from: id, envelope_version, queue, handler_ref, handler_version, status, attempt_count, redrive_count, created_at, next_attempt_at, lease_expires_at, payload_content_type, payload_bytes, source, header.KEY, last.outcome, last.error.type, last.error.message, last.started_at, last.finished_at, fingerprint [default: id, queue, handler_ref, status, attempt_count, redrive_count, created_at, last.outcome, last.error.type, last.error.message, last.finished_at, fingerprint]' -r -f -a "id\t''
envelope_version\t''
queue\t''
handler_ref\t''
handler_version\t''
status\t''
attempt_count\t''
redrive_count\t''
created_at\t''
next_attempt_at\t''
lease_expires_at\t''
payload_content_type\t''
payload_bytes\t''
source\t''
header.\t''
last.outcome\t''
last.error.type\t''
last.error.message\t''
last.started_at\t''
last.finished_at\t''
fingerprint\t''"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand export" -l max-envelope-bytes -d 'The envelope size limit in bytes for queues without a limit of their own (PAYLOAD_TOO_LARGE)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand export" -l queue-limit -d 'A queue\'s own size limit in bytes, replacing --max-envelope-bytes for it (repeatable; over --queue-limits for the same queue)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand export" -l queue-limits -d 'Queues\' own size limits from a file: TOML (`"billing.invoices" = 2097152`, a line per queue) or a JSON object (`{"billing.invoices": 2097152}`)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand export" -l max-line-bytes -d 'The reader cap: a line longer than this many bytes is LINE_TOO_LONG and never held in memory whole' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand export" -s j -l jobs -d 'Worker threads, at most 256 (default: $RDQ_ENVELOPE_JOBS, else the machine\'s available parallelism). Output is the same, byte for byte, whatever the number' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand export" -l max-errors -d 'Stop after N rejected lines: the run ends right after the Nth, in input order, with status 1 and the books of the lines up to it (the lines after it are not read)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand export" -l format -d 'The file format (default: from the -o name, .csv, .tsv or .parquet, else CSV; another ending needs --format)' -r -f -a "csv\t'Comma-separated values (RFC 4180), with a header row'
tsv\t'Tab-separated values, with a header row'
parquet\t'Apache Parquet: typed columns, zstd-compressed'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand export" -s o -l output -d 'The primary output (default: standard output). Regular files (and s3://BUCKET/KEY objects) are written atomically' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand export" -l rejects -d 'Write every rejected line as a JSON record with its errors and raw bytes' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand export" -l summary -d 'Write the run\'s counts as a JSON object' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand export" -l compress -d 'Compress -o this way, whatever its name says (by default a name ending in .zst or .gz is compressed accordingly)' -r -f -a "zstd\t'zstd, multi-threaded'
gzip\t'gzip'
none\t'Plain bytes, whatever the name'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand export" -l zstd-frame -d 'zstd outputs are written in the seekable format, in independent frames of at most SIZE of input each (default: 4MiB): 64KiB to 1GiB, in bytes or with a unit (KiB, MiB, GiB, KB, MB, GB). Smaller frames let a reader start nearer any line; larger ones compress a little better' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand export" -l color -d 'When to colour the stats tables and validate\'s diagnostics: auto (standard output is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow), always, never' -r -f -a "auto\t'Colour standard output when it is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow'
always\t'Colour, wherever the output goes (a pipe, a file given with -o)'
never\t'Never colour'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand export" -l neutralize-formulas -d 'CSV and TSV: prefix with \' (and quote) every text cell that begins with = + - @ tab or CR, so that a spreadsheet shows it as text instead of running it as a formula (the default)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand export" -l no-neutralize-formulas -d 'CSV and TSV: write such cells as they are (counted on standard error)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand export" -s q -l quiet -d 'Print nothing on standard error but errors (no summary line, no progress bar)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand export" -l line-buffered -d 'Flush every output line as soon as it is judged (slower); otherwise output is written in large blocks, and within 50 ms of a line when the input goes quiet'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand export" -l progress -d 'Draw the progress bar even when standard error is not a terminal (not with --quiet)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand export" -l stats -d 'After the closing line, the rejected lines counted by code (and valid lines by warning), most first, on standard error, even with --quiet (validate prints them on a terminal unasked)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand export" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand stats" -l by -d 'What to count the envelopes by. error_type and outcome are the last attempt\'s; fingerprint is the last error\'s, with each group\'s type, template, times and IDs' -r -f -a "queue\t''
handler\t''
status\t''
error_type\t''
outcome\t''
day\t''
fingerprint\t'The last error\'s fingerprint (docs/cli.md#fingerprints)'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand stats" -l top -d 'How many error types (and, in the HTML report, fingerprints) to list' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand stats" -l max-envelope-bytes -d 'The envelope size limit in bytes for queues without a limit of their own (PAYLOAD_TOO_LARGE)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand stats" -l queue-limit -d 'A queue\'s own size limit in bytes, replacing --max-envelope-bytes for it (repeatable; over --queue-limits for the same queue)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand stats" -l queue-limits -d 'Queues\' own size limits from a file: TOML (`"billing.invoices" = 2097152`, a line per queue) or a JSON object (`{"billing.invoices": 2097152}`)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand stats" -l max-line-bytes -d 'The reader cap: a line longer than this many bytes is LINE_TOO_LONG and never held in memory whole' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand stats" -s j -l jobs -d 'Worker threads, at most 256 (default: $RDQ_ENVELOPE_JOBS, else the machine\'s available parallelism). Output is the same, byte for byte, whatever the number' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand stats" -l max-errors -d 'Stop after N rejected lines: the run ends right after the Nth, in input order, with status 1 and the books of the lines up to it (the lines after it are not read)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand stats" -l format -d 'table: aligned tables with bar charts, for people; json: one object, stable for scripts; html: a self-contained triage report with charts (queues, statuses and fingerprints beside --by), to mail or attach to an incident (default: from the -o name, .txt, .json, .html or .htm, else table; another ending needs --format)' -r -f -a "table\t''
json\t''
html\t''"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand stats" -s o -l output -d 'The primary output (default: standard output). Regular files (and s3://BUCKET/KEY objects) are written atomically' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand stats" -l rejects -d 'Write every rejected line as a JSON record with its errors and raw bytes' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand stats" -l summary -d 'Write the run\'s counts as a JSON object' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand stats" -l compress -d 'Compress -o this way, whatever its name says (by default a name ending in .zst or .gz is compressed accordingly)' -r -f -a "zstd\t'zstd, multi-threaded'
gzip\t'gzip'
none\t'Plain bytes, whatever the name'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand stats" -l zstd-frame -d 'zstd outputs are written in the seekable format, in independent frames of at most SIZE of input each (default: 4MiB): 64KiB to 1GiB, in bytes or with a unit (KiB, MiB, GiB, KB, MB, GB). Smaller frames let a reader start nearer any line; larger ones compress a little better' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand stats" -l color -d 'When to colour the stats tables and validate\'s diagnostics: auto (standard output is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow), always, never' -r -f -a "auto\t'Colour standard output when it is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow'
always\t'Colour, wherever the output goes (a pipe, a file given with -o)'
never\t'Never colour'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand stats" -s q -l quiet -d 'Print nothing on standard error but errors (no summary line, no progress bar)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand stats" -l line-buffered -d 'Flush every output line as soon as it is judged (slower); otherwise output is written in large blocks, and within 50 ms of a line when the input goes quiet'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand stats" -l progress -d 'Draw the progress bar even when standard error is not a terminal (not with --quiet)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand stats" -l stats -d 'After the closing line, the rejected lines counted by code (and valid lines by warning), most first, on standard error, even with --quiet (validate prints them on a terminal unasked)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand stats" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand show" -l max-envelope-bytes -d 'The envelope size limit in bytes for queues without a limit of their own (PAYLOAD_TOO_LARGE)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand show" -l queue-limit -d 'A queue\'s own size limit in bytes, replacing --max-envelope-bytes for it (repeatable; over --queue-limits for the same queue)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand show" -l queue-limits -d 'Queues\' own size limits from a file: TOML (`"billing.invoices" = 2097152`, a line per queue) or a JSON object (`{"billing.invoices": 2097152}`)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand show" -l max-line-bytes -d 'The reader cap: a line longer than this many bytes is LINE_TOO_LONG and never held in memory whole' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand show" -s j -l jobs -d 'Worker threads, at most 256 (default: $RDQ_ENVELOPE_JOBS, else the machine\'s available parallelism). Output is the same, byte for byte, whatever the number' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand show" -l max-errors -d 'Stop after N rejected lines: the run ends right after the Nth, in input order, with status 1 and the books of the lines up to it (the lines after it are not read)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand show" -l color -d 'When to colour the stats tables and validate\'s diagnostics: auto (standard output is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow), always, never' -r -f -a "auto\t'Colour standard output when it is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow'
always\t'Colour, wherever the output goes (a pipe, a file given with -o)'
never\t'Never colour'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand show" -l payload -d 'Also print the decoded payload: JSON pretty-printed, text as it is, anything else as a hex dump. On a terminal, control characters are shown as \\x1b or \\u{9b}'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand show" -l payload-only -d 'Print only the decoded payload\'s bytes, as they are (for piping into another tool). An envelope whose payload is by reference (payload_ref) has none: that is said on standard error, and the exit status is 1'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand show" -l all -d 'Print every envelope with the ID, reading the input to its end (by default reading stops at the first)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand show" -s q -l quiet -d 'Print nothing on standard error but errors (commands that read envelopes, and gen)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand show" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand schema" -l version -d 'The envelope_version whose schema to print (default: the newest)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand schema" -s o -l output -d 'Where to write (default: standard output). Regular files are written atomically' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand schema" -l color -d 'When to colour the stats tables and validate\'s diagnostics: auto (standard output is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow), always, never' -r -f -a "auto\t'Colour standard output when it is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow'
always\t'Colour, wherever the output goes (a pipe, a file given with -o)'
never\t'Never colour'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand schema" -s j -l jobs -d 'Worker threads, 1 to 256 (commands that read envelopes; default: $RDQ_ENVELOPE_JOBS, else the machine\'s available parallelism)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand schema" -s q -l quiet -d 'Print nothing on standard error but errors (commands that read envelopes, and gen)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand schema" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand compliance; and not __fish_seen_subcommand_from run fixtures help" -l color -d 'When to colour the stats tables and validate\'s diagnostics: auto (standard output is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow), always, never' -r -f -a "auto\t'Colour standard output when it is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow'
always\t'Colour, wherever the output goes (a pipe, a file given with -o)'
never\t'Never colour'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand compliance; and not __fish_seen_subcommand_from run fixtures help" -s j -l jobs -d 'Worker threads, 1 to 256 (commands that read envelopes; default: $RDQ_ENVELOPE_JOBS, else the machine\'s available parallelism)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand compliance; and not __fish_seen_subcommand_from run fixtures help" -s q -l quiet -d 'Print nothing on standard error but errors (commands that read envelopes, and gen)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand compliance; and not __fish_seen_subcommand_from run fixtures help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand compliance; and not __fish_seen_subcommand_from run fixtures help" -f -a "run" -d 'Hand the fixtures to a plugin\'s write command, read them back with its read command, and report every difference'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand compliance; and not __fish_seen_subcommand_from run fixtures help" -f -a "fixtures" -d 'Write the fixture set into a folder: fixtures.jsonl (what run sends) and fixtures.md (each fixture\'s name, id and the loss it is there to find)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand compliance; and not __fish_seen_subcommand_from run fixtures help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand compliance; and __fish_seen_subcommand_from run" -l write -d 'The plugin\'s command that stores the envelopes it reads on its standard input' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand compliance; and __fish_seen_subcommand_from run" -l read -d 'The plugin\'s command that prints every envelope it stored, one JSON object per line' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand compliance; and __fish_seen_subcommand_from run" -l timeout -d 'Each command\'s time limit, in seconds; past it, the command and every process it started are killed' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand compliance; and __fish_seen_subcommand_from run" -l format -d 'The report\'s form: human rows, or one JSON object' -r -f -a "human\t''
json\t''"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand compliance; and __fish_seen_subcommand_from run" -l junit -d 'Also write the report as JUnit XML, for a CI system\'s test view' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand compliance; and __fish_seen_subcommand_from run" -s o -l output -d 'Where to write the report (default: standard output). Regular files are written atomically' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand compliance; and __fish_seen_subcommand_from run" -l color -d 'When to colour the stats tables and validate\'s diagnostics: auto (standard output is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow), always, never' -r -f -a "auto\t'Colour standard output when it is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow'
always\t'Colour, wherever the output goes (a pipe, a file given with -o)'
never\t'Never colour'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand compliance; and __fish_seen_subcommand_from run" -s j -l jobs -d 'Worker threads, 1 to 256 (commands that read envelopes; default: $RDQ_ENVELOPE_JOBS, else the machine\'s available parallelism)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand compliance; and __fish_seen_subcommand_from run" -l exact -d 'Ask for the same bytes, not only the same JSON value: member order, number spellings, string escapes and white space must come back as they were sent'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand compliance; and __fish_seen_subcommand_from run" -s q -l quiet -d 'Print nothing on standard error but errors (commands that read envelopes, and gen)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand compliance; and __fish_seen_subcommand_from run" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand compliance; and __fish_seen_subcommand_from fixtures" -s o -l output -d 'The folder to write into (made if missing; the two files in it are replaced)' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand compliance; and __fish_seen_subcommand_from fixtures" -l color -d 'When to colour the stats tables and validate\'s diagnostics: auto (standard output is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow), always, never' -r -f -a "auto\t'Colour standard output when it is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow'
always\t'Colour, wherever the output goes (a pipe, a file given with -o)'
never\t'Never colour'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand compliance; and __fish_seen_subcommand_from fixtures" -s j -l jobs -d 'Worker threads, 1 to 256 (commands that read envelopes; default: $RDQ_ENVELOPE_JOBS, else the machine\'s available parallelism)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand compliance; and __fish_seen_subcommand_from fixtures" -s q -l quiet -d 'Print nothing on standard error but errors (commands that read envelopes, and gen)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand compliance; and __fish_seen_subcommand_from fixtures" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand compliance; and __fish_seen_subcommand_from help" -f -a "run" -d 'Hand the fixtures to a plugin\'s write command, read them back with its read command, and report every difference'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand compliance; and __fish_seen_subcommand_from help" -f -a "fixtures" -d 'Write the fixture set into a folder: fixtures.jsonl (what run sends) and fixtures.md (each fixture\'s name, id and the loss it is there to find)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand compliance; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand completions" -l color -d 'When to colour the stats tables and validate\'s diagnostics: auto (standard output is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow), always, never' -r -f -a "auto\t'Colour standard output when it is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow'
always\t'Colour, wherever the output goes (a pipe, a file given with -o)'
never\t'Never colour'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand completions" -s j -l jobs -d 'Worker threads, 1 to 256 (commands that read envelopes; default: $RDQ_ENVELOPE_JOBS, else the machine\'s available parallelism)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand completions" -s q -l quiet -d 'Print nothing on standard error but errors (commands that read envelopes, and gen)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand completions" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand man" -l dir -d 'Write a page per subcommand (rdq-envelope-validate.1, ...) and the main page into DIR, instead of the main page on standard output' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand man" -l color -d 'When to colour the stats tables and validate\'s diagnostics: auto (standard output is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow), always, never' -r -f -a "auto\t'Colour standard output when it is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow'
always\t'Colour, wherever the output goes (a pipe, a file given with -o)'
never\t'Never colour'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand man" -s j -l jobs -d 'Worker threads, 1 to 256 (commands that read envelopes; default: $RDQ_ENVELOPE_JOBS, else the machine\'s available parallelism)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand man" -s q -l quiet -d 'Print nothing on standard error but errors (commands that read envelopes, and gen)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand man" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand convert" -l to -d 'The format to write: proto (length-delimited rdq.envelope.v1/v2 messages, from JSON Lines), or json (canonical JSON Lines, with --from proto)' -r -f -a "json\t''
proto\t''"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand convert" -l from -d 'The format read: proto (a length-delimited stream, each message after its length as a varint), or json (JSON Lines, with --to proto)' -r -f -a "json\t''
proto\t''"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand convert" -l max-envelope-bytes -d 'The envelope size limit in bytes for queues without a limit of their own (PAYLOAD_TOO_LARGE)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand convert" -l queue-limit -d 'A queue\'s own size limit in bytes, replacing --max-envelope-bytes for it (repeatable; over --queue-limits for the same queue)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand convert" -l queue-limits -d 'Queues\' own size limits from a file: TOML (`"billing.invoices" = 2097152`, a line per queue) or a JSON object (`{"billing.invoices": 2097152}`)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand convert" -l max-line-bytes -d 'The reader cap: a line longer than this many bytes is LINE_TOO_LONG and never held in memory whole' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand convert" -s j -l jobs -d 'Worker threads, at most 256 (default: $RDQ_ENVELOPE_JOBS, else the machine\'s available parallelism). Output is the same, byte for byte, whatever the number' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand convert" -l max-errors -d 'Stop after N rejected lines: the run ends right after the Nth, in input order, with status 1 and the books of the lines up to it (the lines after it are not read)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand convert" -s o -l output -d 'The primary output (default: standard output). Regular files (and s3://BUCKET/KEY objects) are written atomically' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand convert" -l rejects -d 'Write every rejected line as a JSON record with its errors and raw bytes' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand convert" -l summary -d 'Write the run\'s counts as a JSON object' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand convert" -l compress -d 'Compress -o this way, whatever its name says (by default a name ending in .zst or .gz is compressed accordingly)' -r -f -a "zstd\t'zstd, multi-threaded'
gzip\t'gzip'
none\t'Plain bytes, whatever the name'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand convert" -l zstd-frame -d 'zstd outputs are written in the seekable format, in independent frames of at most SIZE of input each (default: 4MiB): 64KiB to 1GiB, in bytes or with a unit (KiB, MiB, GiB, KB, MB, GB). Smaller frames let a reader start nearer any line; larger ones compress a little better' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand convert" -l color -d 'When to colour the stats tables and validate\'s diagnostics: auto (standard output is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow), always, never' -r -f -a "auto\t'Colour standard output when it is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow'
always\t'Colour, wherever the output goes (a pipe, a file given with -o)'
never\t'Never colour'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand convert" -s q -l quiet -d 'Print nothing on standard error but errors (no summary line, no progress bar)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand convert" -l line-buffered -d 'Flush every output line as soon as it is judged (slower); otherwise output is written in large blocks, and within 50 ms of a line when the input goes quiet'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand convert" -l progress -d 'Draw the progress bar even when standard error is not a terminal (not with --quiet)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand convert" -l stats -d 'After the closing line, the rejected lines counted by code (and valid lines by warning), most first, on standard error, even with --quiet (validate prints them on a terminal unasked)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand convert" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and not __fish_seen_subcommand_from validate migrate filter help" -l status -d 'Print the progress recorded in DIR\'s manifest (shards done, bytes, lines, rejected) without reading any input, and exit. DIR may be an s3://BUCKET/PREFIX/' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and not __fish_seen_subcommand_from validate migrate filter help" -l out -d 'The output folder (made if missing) or s3://BUCKET/PREFIX/: per shard its lines, rejects and summary, and manifest.json and summary.json. Not the input folder' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and not __fish_seen_subcommand_from validate migrate filter help" -l shards-at-once -d 'How many shards run at once; the -j workers are shared among them (default: 1, every worker on one shard at a time)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and not __fish_seen_subcommand_from validate migrate filter help" -l only -d 'Run only this shard (a file name in the input folder), unless the manifest has it done on the same input, and print its manifest entry as one JSON line; the manifest is not written (for cluster runners: contrib/spark)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and not __fish_seen_subcommand_from validate migrate filter help" -l assemble -d 'Write manifest.json and summary.json from the entries in FILE (the JSON lines of --only runs; `-` is standard input) instead of running the shards' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and not __fish_seen_subcommand_from validate migrate filter help" -l color -d 'When to colour the stats tables and validate\'s diagnostics: auto (standard output is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow), always, never' -r -f -a "auto\t'Colour standard output when it is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow'
always\t'Colour, wherever the output goes (a pipe, a file given with -o)'
never\t'Never colour'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and not __fish_seen_subcommand_from validate migrate filter help" -s j -l jobs -d 'Worker threads, 1 to 256 (commands that read envelopes; default: $RDQ_ENVELOPE_JOBS, else the machine\'s available parallelism)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and not __fish_seen_subcommand_from validate migrate filter help" -l list -d 'Print the names of the input folder\'s shards, one per line, and exit'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and not __fish_seen_subcommand_from validate migrate filter help" -l in-flight -d 'With --assemble: other shards may still be running (a runner recording its progress), so their temporary files are left alone'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and not __fish_seen_subcommand_from validate migrate filter help" -s q -l quiet -d 'Print nothing on standard error but errors (commands that read envelopes, and gen)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and not __fish_seen_subcommand_from validate migrate filter help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and not __fish_seen_subcommand_from validate migrate filter help" -f -a "validate" -d 'validate every shard: its valid lines are its output, its rejects hold the diagnostics'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and not __fish_seen_subcommand_from validate migrate filter help" -f -a "migrate" -d 'migrate every shard: its migrated lines are its output'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and not __fish_seen_subcommand_from validate migrate filter help" -f -a "filter" -d 'filter every shard: its matching lines are its output'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and not __fish_seen_subcommand_from validate migrate filter help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from validate" -l require-version -d 'Reject lines of any other envelope_version (UNSUPPORTED_VERSION). Not with --submit' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from validate" -l max-envelope-bytes -d 'The envelope size limit in bytes for queues without a limit of their own (PAYLOAD_TOO_LARGE)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from validate" -l queue-limit -d 'A queue\'s own size limit in bytes, replacing --max-envelope-bytes for it (repeatable; over --queue-limits for the same queue)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from validate" -l queue-limits -d 'Queues\' own size limits from a file: TOML (`"billing.invoices" = 2097152`, a line per queue) or a JSON object (`{"billing.invoices": 2097152}`)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from validate" -l max-line-bytes -d 'The reader cap: a line longer than this many bytes is LINE_TOO_LONG and never held in memory whole' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from validate" -s j -l jobs -d 'Worker threads, at most 256 (default: $RDQ_ENVELOPE_JOBS, else the machine\'s available parallelism). Output is the same, byte for byte, whatever the number' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from validate" -l max-errors -d 'Stop after N rejected lines: the run ends right after the Nth, in input order, with status 1 and the books of the lines up to it (the lines after it are not read)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from validate" -l format -d 'How diagnostics are written: `SOURCE:LINE: POINTER: CODE: message` rows, or one JSON object per invalid line (default: from the -o name, .txt, .log, .json, .jsonl or .ndjson, else human; another ending needs --format)' -r -f -a "human\t''
json\t''"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from validate" -l valid-out -d 'Also write the valid lines, byte-identical to the input' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from validate" -s o -l output -d 'The primary output (default: standard output). Regular files (and s3://BUCKET/KEY objects) are written atomically' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from validate" -l rejects -d 'Write every rejected line as a JSON record with its errors and raw bytes' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from validate" -l summary -d 'Write the run\'s counts as a JSON object' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from validate" -l compress -d 'Compress -o this way, whatever its name says (by default a name ending in .zst or .gz is compressed accordingly)' -r -f -a "zstd\t'zstd, multi-threaded'
gzip\t'gzip'
none\t'Plain bytes, whatever the name'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from validate" -l zstd-frame -d 'zstd outputs are written in the seekable format, in independent frames of at most SIZE of input each (default: 4MiB): 64KiB to 1GiB, in bytes or with a unit (KiB, MiB, GiB, KB, MB, GB). Smaller frames let a reader start nearer any line; larger ones compress a little better' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from validate" -l out -d 'The output folder (made if missing) or s3://BUCKET/PREFIX/: per shard its lines, rejects and summary, and manifest.json and summary.json. Not the input folder' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from validate" -l shards-at-once -d 'How many shards run at once; the -j workers are shared among them (default: 1, every worker on one shard at a time)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from validate" -l only -d 'Run only this shard (a file name in the input folder), unless the manifest has it done on the same input, and print its manifest entry as one JSON line; the manifest is not written (for cluster runners: contrib/spark)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from validate" -l assemble -d 'Write manifest.json and summary.json from the entries in FILE (the JSON lines of --only runs; `-` is standard input) instead of running the shards' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from validate" -l color -d 'When to colour the stats tables and validate\'s diagnostics: auto (standard output is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow), always, never' -r -f -a "auto\t'Colour standard output when it is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow'
always\t'Colour, wherever the output goes (a pipe, a file given with -o)'
never\t'Never colour'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from validate" -l submit -d 'Judge lines as the submit subset: what a client sends before the server assigns identity and state (docs/envelope.md#the-submit-subset)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from validate" -l warnings -d 'Also report the warnings (ID_TIME_MISMATCH, CREATED_AFTER_START), valid lines included'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from validate" -s q -l quiet -d 'Print nothing on standard error but errors (no summary line, no progress bar)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from validate" -l line-buffered -d 'Flush every output line as soon as it is judged (slower); otherwise output is written in large blocks, and within 50 ms of a line when the input goes quiet'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from validate" -l progress -d 'Draw the progress bar even when standard error is not a terminal (not with --quiet)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from validate" -l stats -d 'After the closing line, the rejected lines counted by code (and valid lines by warning), most first, on standard error, even with --quiet (validate prints them on a terminal unasked)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from validate" -l list -d 'Print the names of the input folder\'s shards, one per line, and exit'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from validate" -l in-flight -d 'With --assemble: other shards may still be running (a runner recording its progress), so their temporary files are left alone'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from validate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from migrate" -l to -d 'The envelope_version to write (default: the newest supported)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from migrate" -l from -d 'What the input lines are: rdq envelopes, or ChokaQ table rows (one JSON object per row, keyed by column name; docs/chokaq.md)' -r -f -a "rdq\t''
chokaq\t''"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from migrate" -l chokaq-table -d 'The ChokaQ table of every row (default: told per row from FailureReason, FinishedAtUtc or Status)' -r -f -a "hot\t'JobsHot: active jobs'
archive\t'JobsArchive: jobs that succeeded'
dlq\t'JobsDLQ: dead letters'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from migrate" -l chokaq-zombie-timeout -d 'Seconds after a running ChokaQ job\'s last heartbeat at which its lease expires (default with --from chokaq: 600)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from migrate" -l chokaq-max-payload-bytes -d 'ChokaQ\'s payload limit in UTF-8 bytes: a payload over it gets the CHOKAQ_LIMIT warning (default with --from chokaq: 1000000)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from migrate" -l max-envelope-bytes -d 'The envelope size limit in bytes for queues without a limit of their own (PAYLOAD_TOO_LARGE)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from migrate" -l queue-limit -d 'A queue\'s own size limit in bytes, replacing --max-envelope-bytes for it (repeatable; over --queue-limits for the same queue)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from migrate" -l queue-limits -d 'Queues\' own size limits from a file: TOML (`"billing.invoices" = 2097152`, a line per queue) or a JSON object (`{"billing.invoices": 2097152}`)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from migrate" -l max-line-bytes -d 'The reader cap: a line longer than this many bytes is LINE_TOO_LONG and never held in memory whole' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from migrate" -s j -l jobs -d 'Worker threads, at most 256 (default: $RDQ_ENVELOPE_JOBS, else the machine\'s available parallelism). Output is the same, byte for byte, whatever the number' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from migrate" -l max-errors -d 'Stop after N rejected lines: the run ends right after the Nth, in input order, with status 1 and the books of the lines up to it (the lines after it are not read)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from migrate" -l warnings-out -d 'Write the warnings of the lines written as JSON Lines, one record per line that has warnings (the record of validate --format json, with "errors": [])' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from migrate" -s o -l output -d 'The primary output (default: standard output). Regular files (and s3://BUCKET/KEY objects) are written atomically' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from migrate" -l rejects -d 'Write every rejected line as a JSON record with its errors and raw bytes' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from migrate" -l summary -d 'Write the run\'s counts as a JSON object' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from migrate" -l compress -d 'Compress -o this way, whatever its name says (by default a name ending in .zst or .gz is compressed accordingly)' -r -f -a "zstd\t'zstd, multi-threaded'
gzip\t'gzip'
none\t'Plain bytes, whatever the name'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from migrate" -l zstd-frame -d 'zstd outputs are written in the seekable format, in independent frames of at most SIZE of input each (default: 4MiB): 64KiB to 1GiB, in bytes or with a unit (KiB, MiB, GiB, KB, MB, GB). Smaller frames let a reader start nearer any line; larger ones compress a little better' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from migrate" -l out -d 'The output folder (made if missing) or s3://BUCKET/PREFIX/: per shard its lines, rejects and summary, and manifest.json and summary.json. Not the input folder' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from migrate" -l shards-at-once -d 'How many shards run at once; the -j workers are shared among them (default: 1, every worker on one shard at a time)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from migrate" -l only -d 'Run only this shard (a file name in the input folder), unless the manifest has it done on the same input, and print its manifest entry as one JSON line; the manifest is not written (for cluster runners: contrib/spark)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from migrate" -l assemble -d 'Write manifest.json and summary.json from the entries in FILE (the JSON lines of --only runs; `-` is standard input) instead of running the shards' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from migrate" -l color -d 'When to colour the stats tables and validate\'s diagnostics: auto (standard output is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow), always, never' -r -f -a "auto\t'Colour standard output when it is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow'
always\t'Colour, wherever the output goes (a pipe, a file given with -o)'
never\t'Never colour'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from migrate" -l warnings -d 'Print the warnings of the lines written (ID_TIME_MISMATCH, CREATED_AFTER_START) on standard error, in the human form of validate'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from migrate" -s q -l quiet -d 'Print nothing on standard error but errors (no summary line, no progress bar)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from migrate" -l line-buffered -d 'Flush every output line as soon as it is judged (slower); otherwise output is written in large blocks, and within 50 ms of a line when the input goes quiet'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from migrate" -l progress -d 'Draw the progress bar even when standard error is not a terminal (not with --quiet)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from migrate" -l stats -d 'After the closing line, the rejected lines counted by code (and valid lines by warning), most first, on standard error, even with --quiet (validate prints them on a terminal unasked)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from migrate" -l list -d 'Print the names of the input folder\'s shards, one per line, and exit'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from migrate" -l in-flight -d 'With --assemble: other shards may still be running (a runner recording its progress), so their temporary files are left alone'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from migrate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l queue -d 'The queue matches GLOB (repeatable)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l handler -d 'handler_ref matches GLOB (repeatable)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l status -d 'The status is S: PENDING, IN_FLIGHT, SUCCEEDED, DEAD or CANCELLED, in any letter case (repeatable)' -r -f -a "PENDING\t''
IN_FLIGHT\t''
SUCCEEDED\t''
DEAD\t''
CANCELLED\t''"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l error-type -d 'Some attempt\'s error.type matches GLOB (repeatable)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l last-error-type -d 'The last attempt\'s error.type matches GLOB (repeatable)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l outcome -d 'The last attempt\'s outcome is O: SUCCESS, RETRYABLE_FAILURE, PERMANENT_FAILURE or LEASE_EXPIRED, in any letter case (repeatable)' -r -f -a "SUCCESS\t''
RETRYABLE_FAILURE\t''
PERMANENT_FAILURE\t''
LEASE_EXPIRED\t''"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l since -d 'created_at is at or after TS: 2024-05-01T12:00:00.000Z, 2024-05-01 (midnight UTC), RFC 3339 with any offset, or 2h, 3d, 90m (that long before now)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l until -d 'created_at is before TS (any form --since takes)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l failed-since -d 'The last attempt\'s finished_at is at or after TS (any form --since takes)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l failed-until -d 'The last attempt\'s finished_at is before TS' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l fingerprint -d 'The last error\'s fingerprint (stats --by fingerprint) is HEX (repeatable)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l error-message -d 'Some attempt\'s error.message matches REGEX, unanchored, like grep -E (repeatable)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l where -d 'A jq expression: keep the envelope when it outputs a value other than false and null before any error, as jq \'select(EXPR)\' does. Runs only on the lines the other predicates kept' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l where-timeout -d 'With --where: end the run (status 2) when one line has been evaluated for longer than this many seconds [default: 10]; 0 turns the limit off' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l where-max-memory -d 'With --where: end the run (status 2) when the process holds more than this much memory, in MiB [default: 4096]; 0 turns the limit off' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l limit -d 'Stop after N matching lines (the rest of the input is not read)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l id -d 'The id is exactly ID (repeatable)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l header -d 'Header KEY\'s value matches GLOB; rdq.source and rdq.submitted_by also match a v2 origin (repeatable; each must hold)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l min-attempts -d 'At least N attempt records (the whole history across redrives)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l max-attempts -d 'At most N attempt records' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l min-redrives -d 'At least N redrives' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l payload-contains -d 'The decoded payload contains TEXT (repeatable)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l max-envelope-bytes -d 'The envelope size limit in bytes for queues without a limit of their own (PAYLOAD_TOO_LARGE)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l queue-limit -d 'A queue\'s own size limit in bytes, replacing --max-envelope-bytes for it (repeatable; over --queue-limits for the same queue)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l queue-limits -d 'Queues\' own size limits from a file: TOML (`"billing.invoices" = 2097152`, a line per queue) or a JSON object (`{"billing.invoices": 2097152}`)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l max-line-bytes -d 'The reader cap: a line longer than this many bytes is LINE_TOO_LONG and never held in memory whole' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -s j -l jobs -d 'Worker threads, at most 256 (default: $RDQ_ENVELOPE_JOBS, else the machine\'s available parallelism). Output is the same, byte for byte, whatever the number' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l max-errors -d 'Stop after N rejected lines: the run ends right after the Nth, in input order, with status 1 and the books of the lines up to it (the lines after it are not read)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -s o -l output -d 'The primary output (default: standard output). Regular files (and s3://BUCKET/KEY objects) are written atomically' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l rejects -d 'Write every rejected line as a JSON record with its errors and raw bytes' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l summary -d 'Write the run\'s counts as a JSON object' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l compress -d 'Compress -o this way, whatever its name says (by default a name ending in .zst or .gz is compressed accordingly)' -r -f -a "zstd\t'zstd, multi-threaded'
gzip\t'gzip'
none\t'Plain bytes, whatever the name'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l zstd-frame -d 'zstd outputs are written in the seekable format, in independent frames of at most SIZE of input each (default: 4MiB): 64KiB to 1GiB, in bytes or with a unit (KiB, MiB, GiB, KB, MB, GB). Smaller frames let a reader start nearer any line; larger ones compress a little better' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l out -d 'The output folder (made if missing) or s3://BUCKET/PREFIX/: per shard its lines, rejects and summary, and manifest.json and summary.json. Not the input folder' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l shards-at-once -d 'How many shards run at once; the -j workers are shared among them (default: 1, every worker on one shard at a time)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l only -d 'Run only this shard (a file name in the input folder), unless the manifest has it done on the same input, and print its manifest entry as one JSON line; the manifest is not written (for cluster runners: contrib/spark)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l assemble -d 'Write manifest.json and summary.json from the entries in FILE (the JSON lines of --only runs; `-` is standard input) instead of running the shards' -r -F
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l color -d 'When to colour the stats tables and validate\'s diagnostics: auto (standard output is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow), always, never' -r -f -a "auto\t'Colour standard output when it is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow'
always\t'Colour, wherever the output goes (a pipe, a file given with -o)'
never\t'Never colour'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l invert -d 'Emit the valid lines that do not match instead'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l count -d 'Print only the number of matching lines'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -s q -l quiet -d 'Print nothing on standard error but errors (no summary line, no progress bar)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l line-buffered -d 'Flush every output line as soon as it is judged (slower); otherwise output is written in large blocks, and within 50 ms of a line when the input goes quiet'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l progress -d 'Draw the progress bar even when standard error is not a terminal (not with --quiet)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l stats -d 'After the closing line, the rejected lines counted by code (and valid lines by warning), most first, on standard error, even with --quiet (validate prints them on a terminal unasked)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l list -d 'Print the names of the input folder\'s shards, one per line, and exit'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -l in-flight -d 'With --assemble: other shards may still be running (a runner recording its progress), so their temporary files are left alone'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from filter" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from help" -f -a "validate" -d 'validate every shard: its valid lines are its output, its rejects hold the diagnostics'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from help" -f -a "migrate" -d 'migrate every shard: its migrated lines are its output'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from help" -f -a "filter" -d 'filter every shard: its matching lines are its output'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand batch; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand explain" -l color -d 'When to colour the stats tables and validate\'s diagnostics: auto (standard output is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow), always, never' -r -f -a "auto\t'Colour standard output when it is a terminal, as NO_COLOR, CLICOLOR and CLICOLOR_FORCE allow'
always\t'Colour, wherever the output goes (a pipe, a file given with -o)'
never\t'Never colour'"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand explain" -s j -l jobs -d 'Worker threads, 1 to 256 (commands that read envelopes; default: $RDQ_ENVELOPE_JOBS, else the machine\'s available parallelism)' -r
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand explain" -l list -d 'List every code with its one-line summary'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand explain" -s q -l quiet -d 'Print nothing on standard error but errors (commands that read envelopes, and gen)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand explain" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand help; and not __fish_seen_subcommand_from validate gen migrate redrive dedupe sample filter export stats show schema compliance completions man convert batch explain help" -f -a "validate" -d 'Check every line against the envelope rules (docs/envelope.md) and report each broken rule'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand help; and not __fish_seen_subcommand_from validate gen migrate redrive dedupe sample filter export stats show schema compliance completions man convert batch explain help" -f -a "gen" -d 'Write deterministic synthetic envelopes, DLQ-shaped, for benchmarks and pipeline tests'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand help; and not __fish_seen_subcommand_from validate gen migrate redrive dedupe sample filter export stats show schema compliance completions man convert batch explain help" -f -a "migrate" -d 'Write every valid line as another envelope_version (docs/migrations.md), losslessly'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand help; and not __fish_seen_subcommand_from validate gen migrate redrive dedupe sample filter export stats show schema compliance completions man convert batch explain help" -f -a "redrive" -d 'Turn DEAD envelopes into resubmittable ones: status PENDING, attempt_count 0, redrive_count + 1, next_attempt_at the time given, lease_expires_at null, attempts kept'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand help; and not __fish_seen_subcommand_from validate gen migrate redrive dedupe sample filter export stats show schema compliance completions man convert batch explain help" -f -a "dedupe" -d 'Keep one copy per id, byte-identical and in input order; count the dropped copies'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand help; and not __fish_seen_subcommand_from validate gen migrate redrive dedupe sample filter export stats show schema compliance completions man convert batch explain help" -f -a "sample" -d 'Keep a uniform random sample of N valid lines (N per queue with --by queue), in input order'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand help; and not __fish_seen_subcommand_from validate gen migrate redrive dedupe sample filter export stats show schema compliance completions man convert batch explain help" -f -a "filter" -d 'Write the valid lines that match every predicate, byte-identical to the input'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand help; and not __fish_seen_subcommand_from validate gen migrate redrive dedupe sample filter export stats show schema compliance completions man convert batch explain help" -f -a "export" -d 'Write one row per valid envelope, with the columns chosen, as CSV, TSV or Parquet'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand help; and not __fish_seen_subcommand_from validate gen migrate redrive dedupe sample filter export stats show schema compliance completions man convert batch explain help" -f -a "stats" -d 'Count the valid envelopes per group, with attempt and redrive histograms, the created_at range, the top error types and the arrivals per day'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand help; and not __fish_seen_subcommand_from validate gen migrate redrive dedupe sample filter export stats show schema compliance completions man convert batch explain help" -f -a "show" -d 'Print the envelope with an ID, pretty (only white space changes), and with --payload its decoded payload'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand help; and not __fish_seen_subcommand_from validate gen migrate redrive dedupe sample filter export stats show schema compliance completions man convert batch explain help" -f -a "schema" -d 'Print the JSON Schema (draft 2020-12) of an envelope version (default: the newest)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand help; and not __fish_seen_subcommand_from validate gen migrate redrive dedupe sample filter export stats show schema compliance completions man convert batch explain help" -f -a "compliance" -d 'The storage plugins\' round-trip kit: run a plugin\'s write and read commands over the fixtures and report every difference (run), or write the fixture set (fixtures)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand help; and not __fish_seen_subcommand_from validate gen migrate redrive dedupe sample filter export stats show schema compliance completions man convert batch explain help" -f -a "completions" -d 'Print the shell completion script for SHELL'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand help; and not __fish_seen_subcommand_from validate gen migrate redrive dedupe sample filter export stats show schema compliance completions man convert batch explain help" -f -a "man" -d 'Print the manual page (roff): `rdq-envelope man | man -l -`'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand help; and not __fish_seen_subcommand_from validate gen migrate redrive dedupe sample filter export stats show schema compliance completions man convert batch explain help" -f -a "convert" -d 'Convert envelopes between JSON Lines and protobuf (docs/proto.md): --to proto writes each valid line as its rdq.envelope.v1/v2 message, --from proto each message as its canonical JSON line'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand help; and not __fish_seen_subcommand_from validate gen migrate redrive dedupe sample filter export stats show schema compliance completions man convert batch explain help" -f -a "batch" -d 'Run validate, migrate or filter over every shard of a folder into another, resumably'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand help; and not __fish_seen_subcommand_from validate gen migrate redrive dedupe sample filter export stats show schema compliance completions man convert batch explain help" -f -a "explain" -d 'Explain an error or warning code: the rule, where it is reported, a line that gets it and how to fix it (as `rustc --explain` does); --list lists every code'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand help; and not __fish_seen_subcommand_from validate gen migrate redrive dedupe sample filter export stats show schema compliance completions man convert batch explain help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand help; and __fish_seen_subcommand_from compliance" -f -a "run" -d 'Hand the fixtures to a plugin\'s write command, read them back with its read command, and report every difference'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand help; and __fish_seen_subcommand_from compliance" -f -a "fixtures" -d 'Write the fixture set into a folder: fixtures.jsonl (what run sends) and fixtures.md (each fixture\'s name, id and the loss it is there to find)'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand help; and __fish_seen_subcommand_from batch" -f -a "validate" -d 'validate every shard: its valid lines are its output, its rejects hold the diagnostics'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand help; and __fish_seen_subcommand_from batch" -f -a "migrate" -d 'migrate every shard: its migrated lines are its output'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand help; and __fish_seen_subcommand_from batch" -f -a "filter" -d 'filter every shard: its matching lines are its output'
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand completions" -f -a "bash elvish fish powershell zsh"
complete -c rdq-envelope -n "__fish_rdq_envelope_using_subcommand explain" -f -a "LINE_TOO_LONG INVALID_UTF8 MALFORMED_JSON NOT_AN_OBJECT DUPLICATE_KEY NESTING_TOO_DEEP MISSING_FIELD WRONG_TYPE OUT_OF_RANGE UNSUPPORTED_VERSION INVALID_ID INVALID_NAME INVALID_BASE64 INVALID_CONTENT_TYPE PAYLOAD_REF_RESERVED INVALID_PAYLOAD_REF INVALID_HEADER RESERVED_HEADER SERVER_ASSIGNED_FIELD UNKNOWN_STATUS UNKNOWN_OUTCOME INVALID_TIMESTAMP FIELD_TOO_LONG BAD_ATTEMPT INCONSISTENT_STATE PAYLOAD_TOO_LARGE CANNOT_DOWNGRADE MIGRATION_CONFLICT NOT_DEAD REDRIVE_LIMIT ID_TIME_MISMATCH CREATED_AFTER_START CHOKAQ_LIMIT"
