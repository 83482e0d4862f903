//! The Parquet side of `export`: Arrow arrays from the workers' column values, a Parquet
//! writer over an in-memory buffer that the writer's thread drains into each chunk's output.
//!
//! Parquet is written front to back (the footer, with every offset, comes last), so it needs no
//! seekable file: the bytes go through the run's ordinary output, atomic like every other.

use std::sync::Arc;

use arrow_array::builder::{Int64Builder, StringBuilder, TimestampMillisecondBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

use super::{ColumnType, ColumnValues, ExportError, ExportField, ExportTally};
use super::{ROW_GROUP_BYTES, ROW_GROUP_ROWS};

/// The Parquet writer and what it has not handed out yet.
pub(super) struct ParquetSink {
    schema: SchemaRef,
    types: Vec<ColumnType>,
    /// `None` once finished, or after a failure (kept in `failed`).
    writer: Option<ArrowWriter<Vec<u8>>>,
    /// The first error: `settle` cannot fail, so it is reported when the run finishes.
    failed: Option<String>,
}

impl std::fmt::Debug for ParquetSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParquetSink")
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

impl ParquetSink {
    pub(super) fn new(fields: &[ExportField]) -> Result<Self, ExportError> {
        let types: Vec<ColumnType> = fields.iter().map(ExportField::column_type).collect();
        let columns: Vec<Field> = fields
            .iter()
            .zip(&types)
            .map(|(field, kind)| Field::new(field.name(), data_type(*kind), true))
            .collect();
        let schema = Arc::new(Schema::new(columns));
        let level = ZstdLevel::try_new(3).map_err(|e| ExportError::Parquet(e.to_string()))?;
        let properties = WriterProperties::builder()
            .set_compression(Compression::ZSTD(level))
            .set_max_row_group_size(ROW_GROUP_ROWS)
            .set_created_by(format!("rdq-envelope {}", env!("CARGO_PKG_VERSION")))
            .build();
        let writer = ArrowWriter::try_new(Vec::new(), Arc::clone(&schema), Some(properties))
            .map_err(|e| ExportError::Parquet(e.to_string()))?;
        Ok(ParquetSink {
            schema,
            types,
            writer: Some(writer),
            failed: None,
        })
    }

    /// Writes a chunk's rows and moves the encoded bytes ready so far to `out`.
    pub(super) fn append(&mut self, tally: &mut ExportTally, out: &mut Vec<u8>) {
        if tally.rows == 0 {
            return;
        }
        let Some(writer) = self.writer.as_mut() else {
            return;
        };
        let arrays: Vec<ArrayRef> = tally
            .columns
            .iter()
            .zip(&self.types)
            .map(|(values, kind)| array(values, *kind))
            .collect();
        let written = RecordBatch::try_new(Arc::clone(&self.schema), arrays)
            .map_err(|e| e.to_string())
            .and_then(|batch| writer.write(&batch).map_err(|e| e.to_string()))
            .and_then(|()| {
                // Long texts: close the row group before its buffers grow past the budget.
                if writer.in_progress_size() > ROW_GROUP_BYTES {
                    writer.flush().map_err(|e| e.to_string())?;
                }
                Ok(())
            });
        match written {
            Ok(()) => {
                let encoded = writer.inner_mut();
                out.extend_from_slice(encoded);
                encoded.clear();
            }
            Err(e) => {
                self.failed.get_or_insert(e);
                self.writer = None;
            }
        }
    }

    /// The rows still held and the footer.
    pub(super) fn finish(&mut self) -> Result<Vec<u8>, ExportError> {
        if let Some(failed) = &self.failed {
            return Err(ExportError::Parquet(failed.clone()));
        }
        let writer = self
            .writer
            .take()
            .ok_or_else(|| ExportError::Parquet("the file was already finished".into()))?;
        writer
            .into_inner()
            .map_err(|e| ExportError::Parquet(e.to_string()))
    }
}

fn data_type(kind: ColumnType) -> DataType {
    match kind {
        ColumnType::Text => DataType::Utf8,
        ColumnType::Integer => DataType::Int64,
        ColumnType::Timestamp => DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
    }
}

/// One column's Arrow array.
fn array(values: &ColumnValues, kind: ColumnType) -> ArrayRef {
    let rows = values.valid.len();
    match kind {
        ColumnType::Text => {
            let mut builder = StringBuilder::with_capacity(rows, values.text.len());
            let mut start = 0;
            for (&end, &valid) in values.ends.iter().zip(&values.valid) {
                match valid {
                    true => builder.append_value(&values.text[start..end]),
                    false => builder.append_null(),
                }
                start = end;
            }
            Arc::new(builder.finish())
        }
        ColumnType::Integer => {
            let mut builder = Int64Builder::with_capacity(rows);
            builder.append_values(&values.numbers, &values.valid);
            Arc::new(builder.finish())
        }
        ColumnType::Timestamp => {
            let mut builder = TimestampMillisecondBuilder::with_capacity(rows).with_timezone("UTC");
            builder.append_values(&values.numbers, &values.valid);
            Arc::new(builder.finish())
        }
    }
}
