//! A hook of test builds only (compiled out of release builds): an operation that panics on a
//! chosen line, so that the tests can prove a panic ends the run with status 2.

use rdq_envelope::pipeline::{self, LineOperation};

/// An operation that panics on a line holding `marker`, else does what `op` does (test builds
/// only, see `Run::execute`).
pub struct PanicOn<'a, Op> {
    pub op: &'a Op,
    pub marker: Vec<u8>,
}

impl<Op: LineOperation> LineOperation for PanicOn<'_, Op> {
    const OUTPUTS: usize = Op::OUTPUTS;
    type Worker = Op::Worker;
    type Tally = Op::Tally;
    type Total = Op::Total;

    fn worker(&self) -> Self::Worker {
        self.op.worker()
    }

    fn total(&self) -> Self::Total {
        self.op.total()
    }

    fn apply(
        &self,
        worker: &mut Self::Worker,
        line: pipeline::SourceLine<'_>,
        out: &mut pipeline::ChunkOutput<Self::Tally>,
    ) -> pipeline::Action {
        if memchr::memmem::find(line.line.content, &self.marker).is_some() {
            panic!("the test's panic on line {}", line.line.number);
        }
        self.op.apply(worker, line, out)
    }

    fn merge(&self, total: &mut Self::Total, tally: &mut Self::Tally) {
        self.op.merge(total, tally)
    }

    fn settle(&self, total: &mut Self::Total, out: &mut pipeline::ChunkOutput<Self::Tally>) {
        self.op.settle(total, out)
    }
}
