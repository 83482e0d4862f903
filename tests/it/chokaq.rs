//! The ChokaQ import (docs/chokaq.md), row by row: hand-written rows of each table with their exact
//! envelopes (golden files in `tests/chokaq/`, reviewed by hand; `UPDATE_GOLDEN=1` rewrites
//! them), rows rejected with their exact codes and pointers, and a property test that every
//! `gen --format chokaq` row imports to a valid envelope.

use std::path::PathBuf;

use proptest::prelude::*;

use rdq_envelope::chokaq::{ChokaqOptions, Importer, Table};
use rdq_envelope::generate::ChokaqGenerator;
use rdq_envelope::{Diagnostic, EnvelopeRules, ErrorCode, JsonParser, RuleOptions, Verdict};

/// Codes and pointers, as a row's rejection lists them.
type Codes = Vec<(ErrorCode, String)>;

/// Imports `row`; the envelope (validated) and the warnings, or every error.
fn import(row: &str, table: Option<Table>) -> Result<(String, Vec<Diagnostic>), Codes> {
    let mut options = ChokaqOptions::default();
    options.table = table;
    let rules = EnvelopeRules::new(RuleOptions::default()).unwrap();
    let mut importer = Importer::new(options, rules.options());
    let mut parser = JsonParser::new();
    let mut errors = Vec::new();
    let codes = |errors: Vec<Diagnostic>| {
        errors
            .into_iter()
            .map(|d| (d.code, d.path))
            .collect::<Vec<_>>()
    };
    let Some(doc) = parser.parse(row.as_bytes(), &mut errors) else {
        return Err(codes(errors));
    };
    let (mut out, mut warnings) = (Vec::new(), Vec::new());
    if !importer.import(row.as_bytes(), &doc, &mut out, &mut errors, &mut warnings) {
        return Err(codes(errors));
    }
    let mut verdict = Verdict::default();
    rules.check_line(&mut JsonParser::new(), &out, &mut verdict);
    if !verdict.is_valid() {
        return Err(codes(verdict.errors));
    }
    Ok((String::from_utf8(out).unwrap(), warnings))
}

fn golden(name: &str, envelope: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/chokaq")
        .join(format!("{name}.json"));
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, format!("{envelope}\n")).unwrap();
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_GOLDEN=1 writes it)", path.display()));
    assert_eq!(envelope, want.trim_end(), "{name}");
}

const REASONS: [&str; 11] = [
    "MaxRetriesExceeded",
    "Cancelled",
    "Zombie",
    "CircuitBreakerOpen",
    "Rejected",
    "Throttled",
    "FatalError",
    "Timeout",
    "Transient",
    "HeartbeatFailure",
    "RetryLifetimeExpired",
];

fn dlq_row(reason: &str, details: &str) -> String {
    format!(
        r#"{{"Id":"3f2504e0-4f89-11d3-9a0c-0305e82c3301","Queue":"emails","Type":"Acme.SendWelcome","Payload":"{{\"To\":\"a@b.c\"}}","FailureReason":{reason},"ErrorDetails":{details},"AttemptCount":2,"CreatedAtUtc":"2026-04-30 14:32:07.1234567","FailedAtUtc":"2026-04-30T14:33:00Z"}}"#
    )
}

#[test]
fn every_failure_reason_has_its_outcome_and_error() {
    let stack = r#""System.InvalidOperationException: outer\r\n ---> System.IO.IOException: inner\r\n   at X.Y()\r\n   --- End of inner exception stack trace ---\r\n   at A.B()""#;
    for (i, name) in REASONS.iter().enumerate() {
        let (envelope, _) = import(&dlq_row(&i.to_string(), stack), None).unwrap();
        golden(&format!("dlq_reason_{i}_{name}"), &envelope);
        let outcome = match i {
            0 | 5 | 8 | 10 => "RETRYABLE_FAILURE",
            2 | 9 => "LEASE_EXPIRED",
            _ => "PERMANENT_FAILURE",
        };
        assert!(
            envelope.contains(&format!(r#""outcome":"{outcome}""#)),
            "{envelope}"
        );
        assert!(envelope.contains(&format!(r#""detail":{{"failure_reason":"{name}"}}"#)));
    }
    let (unknown, _) = import(&dlq_row("11", "null"), None).unwrap();
    golden("dlq_reason_11_unknown", &unknown);
    assert!(unknown.contains(r#""error":{"type":"chokaq.11","message":"no details recorded by ChokaQ","detail":{"failure_reason":"11"}}"#));
}

#[test]
fn error_details_of_every_shape() {
    let cases = [
        (
            "null",
            r#""type":"chokaq.FatalError","message":"no details recorded by ChokaQ""#,
        ),
        (
            r#"" \r\n\t""#,
            r#""type":"chokaq.FatalError","message":"no details recorded by ChokaQ""#,
        ),
        (
            r#""disk full""#,
            r#""type":"chokaq.FatalError","message":"disk full""#,
        ),
        (
            r#""Acme.Jobs+Inner`1: two\nlines""#,
            r#""type":"Acme.Jobs+Inner`1","message":"two\nlines","detail""#,
        ),
        (
            r#""System.Exception: top\r\n   at A.B()\r\n   at C.D()""#,
            r#""type":"System.Exception","message":"top","detail":{"failure_reason":"FatalError"},"stack":"   at A.B()\r\n   at C.D()"}"#,
        ),
    ];
    for (details, want) in cases {
        let (envelope, _) = import(&dlq_row("6", details), None).unwrap();
        assert!(envelope.contains(want), "{details}: {envelope}");
    }
    // A LEASE_EXPIRED attempt keeps the whole text as its message, with no stack.
    let (zombie, _) = import(&dlq_row("2", r#""System.Exception: x\n   at A.B()""#), None).unwrap();
    assert!(zombie.contains(r#""error":{"type":"rdq.LeaseExpired","message":"System.Exception: x\n   at A.B()","detail":{"failure_reason":"Zombie"}}"#));
    // Over the envelope's limits: cut at a character boundary, with the marker.
    let long = format!(
        r#""System.Exception: {}\n   at {}""#,
        "é".repeat(3000),
        "x".repeat(70_000)
    );
    let (cut, _) = import(&dlq_row("6", &long), None).unwrap();
    assert!(cut.contains(&format!(r#""message":"{}…[truncated]""#, "é".repeat(2048))));
    assert!(cut.contains("xxx…[truncated]\"}"));
}

#[test]
fn rows_of_each_table_map_to_their_envelopes() {
    let cases: &[(&str, &str, Option<Table>)] = &[
        (
            "hot_pending_never_run",
            r#"{"Id":"job-1","Queue":"default","Type":"email.send.v1","Payload":"42","Status":0,"AttemptCount":0,"CreatedAtUtc":"2026-04-30T14:32:07","Priority":5,"IdempotencyKey":"k-1","CreatedBy":"svc","LastModifiedBy":"ops"}"#,
            None,
        ),
        (
            "hot_fetched_after_two_tries",
            r#"{"id":"job-2","QUEUE":"default","type":"email.send.v1","payload":"not json","status":1,"attemptcount":2,"CreatedAtUtc":"2026-04-30 14:32:07.1","ScheduledAtUtc":"2026-04-30 15:00:00.1234567","StartedAtUtc":"2026-04-30 14:40:00.12","LastUpdatedUtc":"2026-04-30 14:41:00.123","WorkerId":"w-1"}"#,
            None,
        ),
        (
            "hot_processing_without_heartbeat",
            r#"{"Id":"job-3","Queue":"default","Type":"email.send.v1","Payload":null,"Status":2,"AttemptCount":0,"CreatedAtUtc":"2026-04-30T14:32:07.1234","StartedAtUtc":"2026-04-30T14:32:08.12345","LastUpdatedUtc":"2026-04-30T14:32:09.123456"}"#,
            Some(Table::Hot),
        ),
        (
            "archive_without_start",
            r#"{"Id":"01hwt0d7g0q8v9w2r4t6y8a0b2","Queue":"Billing","Type":"Acme.Billing.Charge, Acme.Billing, Version=1.0.0.0","Payload":"{\"A\":1}","AttemptCount":1,"CreatedAtUtc":"2026-04-30T14:32:07Z","FinishedAtUtc":"2026-04-30T14:32:08.5","DurationMs":1.1e3,"Tags":"a,b"}"#,
            None,
        ),
        (
            "dlq_cancelled_before_it_ran",
            r#"{"Id":"job-5","Queue":"critical","Type":"Acme.Jobs.Sync","FailureReason":1,"AttemptCount":0,"CreatedAtUtc":"2026-04-30T14:32:07","FailedAtUtc":"2026-04-30T14:32:07"}"#,
            Some(Table::Dlq),
        ),
        (
            "names_long_and_not_ascii",
            &format!(
                r#"{{"Id":"job 6/é","Queue":"{}","Type":"Acme.Zähler.Läuft","FailureReason":6,"AttemptCount":1,"CreatedAtUtc":"2026-04-30T14:32:07","FailedAtUtc":"2026-04-30T14:32:07"}}"#,
                "Q".repeat(300)
            ),
            None,
        ),
    ];
    for (name, row, table) in cases {
        let (envelope, _) = import(row, *table).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        golden(name, &envelope);
    }
}

#[test]
fn rejected_rows_name_every_bad_column() {
    use ErrorCode::*;
    let base = r#"{"Id":"j","Queue":"q","Type":"T","FailureReason":0,"AttemptCount":1,"CreatedAtUtc":"2026-04-30T14:32:07","FailedAtUtc":"2026-04-30T14:32:07"}"#;
    let without = |column: &str| {
        let mut row: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(base).unwrap();
        row.remove(column);
        serde_json::to_string(&row).unwrap()
    };
    for column in [
        "Id",
        "Queue",
        "Type",
        "AttemptCount",
        "CreatedAtUtc",
        "FailedAtUtc",
    ] {
        assert_eq!(
            import(&without(column), None).unwrap_err(),
            [(MissingField, format!("/{column}"))],
            "{column}"
        );
    }
    type Edit<'a> = (&'a str, &'a str, &'a [(ErrorCode, &'a str)]);
    let edits: &[Edit<'_>] = &[
        (r#""Id":"j""#, r#""Id":7"#, &[(WrongType, "/Id")]),
        (
            r#""AttemptCount":1"#,
            r#""AttemptCount":1.0"#,
            &[(WrongType, "/AttemptCount")],
        ),
        (
            r#""AttemptCount":1"#,
            r#""AttemptCount":-1"#,
            &[(OutOfRange, "/AttemptCount")],
        ),
        (
            r#""AttemptCount":1"#,
            r#""AttemptCount":4294967296"#,
            &[(OutOfRange, "/AttemptCount")],
        ),
        (
            r#"07","Failed"#,
            r#"07+00:00","Failed"#,
            &[(InvalidTimestamp, "/CreatedAtUtc")],
        ),
        (
            r#""CreatedAtUtc":"2026"#,
            r#""CreatedAtUtc":"1969"#,
            &[(InvalidTimestamp, "/CreatedAtUtc")],
        ),
        (
            r#""Id":"j""#,
            r#""Id":"j","id":"k""#,
            &[(DuplicateKey, "/id")],
        ),
        (
            r#""FailureReason":0"#,
            r#""FailureReason":0,"Status":0"#,
            &[(InconsistentState, "/Status")],
        ),
        (r#""FailureReason":0,"#, "", &[(MissingField, "")]),
        (
            r#""AttemptCount":1"#,
            r#""AttemptCount":4000000"#,
            &[(PayloadTooLarge, "")],
        ),
    ];
    for (from, to, want) in edits {
        let row = base.replacen(from, to, 1);
        let want: Vec<(ErrorCode, String)> =
            want.iter().map(|(c, p)| (*c, p.to_string())).collect();
        assert_eq!(import(&row, None).unwrap_err(), want, "{row}");
    }
    // The telling column itself is required when the table is given.
    let told = [
        (Table::Dlq, "FailureReason"),
        (Table::Hot, "Status"),
        (Table::Archive, "FinishedAtUtc"),
    ];
    for (table, column) in told {
        let row = r#"{"Id":"j","Queue":"q","Type":"T","AttemptCount":1,"CreatedAtUtc":"2026-04-30T14:32:07","FailedAtUtc":"2026-04-30T14:32:07"}"#;
        // FailedAtUtc, a DLQ column, is ignored in the other tables.
        assert_eq!(
            import(row, Some(table)).unwrap_err(),
            [(MissingField, format!("/{column}"))],
            "{column}"
        );
    }
    // With the table given, the telling column of another table is inconsistent; a Hot
    // status outside 0..2 is unknown.
    let hot = r#"{"Id":"j","Queue":"q","Type":"T","Status":3,"AttemptCount":0,"CreatedAtUtc":"2026-04-30T14:32:07","FinishedAtUtc":"2026-04-30T14:32:07"}"#;
    assert_eq!(
        import(hot, Some(Table::Hot)).unwrap_err(),
        [
            (InconsistentState, "/FinishedAtUtc".to_owned()),
            (UnknownStatus, "/Status".to_owned())
        ]
    );
    // A history that breaks the envelope rules: reported at its envelope pointer.
    let backwards = r#"{"Id":"j","Queue":"q","Type":"T","Status":0,"AttemptCount":1,"CreatedAtUtc":"2026-04-30T14:32:07","StartedAtUtc":"2026-04-30T14:32:09","LastUpdatedUtc":"2026-04-30T14:32:08"}"#;
    assert_eq!(
        import(backwards, None).unwrap_err(),
        [(BadAttempt, "/attempts/0/finished_at".to_owned())]
    );
}

#[test]
fn chokaq_limits_are_warnings() {
    let row = format!(
        r#"{{"Id":"j","Queue":"q","Type":"T","Tags":"{}","CreatedBy":"{}","FailureReason":0,"AttemptCount":1,"CreatedAtUtc":"2026-04-30T14:32:07","FailedAtUtc":"2026-04-30T14:32:07"}}"#,
        "t".repeat(1001),
        "😀".repeat(51)
    );
    let (_, warnings) = import(&row, None).unwrap();
    let found: Vec<_> = warnings.iter().map(|d| (d.code, d.path.as_str())).collect();
    assert_eq!(
        found,
        [
            (ErrorCode::ChokaqLimit, "/CreatedBy"),
            (ErrorCode::ChokaqLimit, "/Tags")
        ]
    );
}

#[test]
fn the_same_job_gets_the_same_id_from_any_table() {
    let dlq = import(&dlq_row("0", "null"), None).unwrap().0;
    let archive = r#"{"Id":"3f2504e0-4f89-11d3-9a0c-0305e82c3301","Queue":"emails","Type":"Acme.SendWelcome","AttemptCount":1,"CreatedAtUtc":"2026-04-30 14:32:07.1234567","FinishedAtUtc":"2026-04-30T14:33:00Z"}"#;
    let archive = import(archive, None).unwrap().0;
    assert_eq!(dlq[..51], archive[..51], "{dlq}\n{archive}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_generated_row_imports(seed in any::<u64>(), table in 0u8..4) {
        let table = [None, Some(Table::Hot), Some(Table::Archive), Some(Table::Dlq)][usize::from(table)];
        let mut generator = ChokaqGenerator::new(seed, table);
        for _ in 0..20 {
            let mut row = Vec::new();
            generator.next_row(&mut row);
            let row = String::from_utf8(row).unwrap();
            let imported = import(&row, table);
            prop_assert!(imported.is_ok(), "{:?}\n{}", imported.err(), row);
        }
    }
}
