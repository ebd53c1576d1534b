//! Which `--query-gpu` fields the sampler asks for, and how it falls back when a driver refuses
//! one. Drivers before 535 only know `clocks_throttle_reasons.*`; 535 renamed them
//! `clocks_event_reasons.*` and (as of 590–610, see the `--help-query-gpu` captures) still accept
//! the old name as an alias. We ask for the new name first, the old one when it is refused, and
//! go without throttle reasons when neither is known; any other optional field is simply dropped.

use crate::shell;

/// One column the sampler understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Index,
    /// GPUs in the system: lets a sample be handed on as soon as its last GPU's line arrives.
    Count,
    Uuid,
    Utilization,
    MemoryUsed,
    MemoryTotal,
    Temperature,
    PowerDraw,
    PowerLimit,
    SmClock,
    ClocksEventReasons,
    ClocksThrottleReasons,
    /// A column of a capture the sampler does not read.
    Other,
}

impl Field {
    /// The name nvidia-smi takes after `--query-gpu=`.
    pub fn query_name(self) -> &'static str {
        match self {
            Self::Index => "index",
            Self::Count => "count",
            Self::Uuid => "uuid",
            Self::Utilization => "utilization.gpu",
            Self::MemoryUsed => "memory.used",
            Self::MemoryTotal => "memory.total",
            Self::Temperature => "temperature.gpu",
            Self::PowerDraw => "power.draw",
            Self::PowerLimit => "power.limit",
            Self::SmClock => "clocks.sm",
            Self::ClocksEventReasons => "clocks_event_reasons.active",
            Self::ClocksThrottleReasons => "clocks_throttle_reasons.active",
            Self::Other => "",
        }
    }

    /// A header column (`memory.used [MiB]`, or an alias nvidia-smi accepts) as a field.
    pub fn from_header(column: &str) -> Self {
        let name = column.split(" [").next().unwrap_or(column).trim();
        match name {
            "index" => Self::Index,
            "count" => Self::Count,
            "uuid" | "gpu_uuid" => Self::Uuid,
            "utilization.gpu" => Self::Utilization,
            "memory.used" => Self::MemoryUsed,
            "memory.total" => Self::MemoryTotal,
            "temperature.gpu" => Self::Temperature,
            "power.draw" => Self::PowerDraw,
            "power.limit" => Self::PowerLimit,
            "clocks.sm" | "clocks.current.sm" => Self::SmClock,
            "clocks_event_reasons.active" => Self::ClocksEventReasons,
            "clocks_throttle_reasons.active" => Self::ClocksThrottleReasons,
            _ => Self::Other,
        }
    }

    /// Without these there is nothing worth sampling.
    fn required(self) -> bool {
        matches!(
            self,
            Self::Index | Self::Utilization | Self::MemoryUsed | Self::MemoryTotal
        )
    }
}

/// The columns of one `--query-gpu` stream, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryFields(pub Vec<Field>);

impl Default for QueryFields {
    fn default() -> Self {
        Self(vec![
            Field::Index,
            Field::Count,
            Field::Uuid,
            Field::Utilization,
            Field::MemoryUsed,
            Field::MemoryTotal,
            Field::Temperature,
            Field::PowerDraw,
            Field::PowerLimit,
            Field::SmClock,
            Field::ClocksEventReasons,
        ])
    }
}

impl QueryFields {
    /// The columns of a CSV header line (a capture with `--format=csv`).
    pub fn from_header(header: &str) -> Self {
        Self(header.split(',').map(Field::from_header).collect())
    }

    fn names(&self) -> String {
        self.0
            .iter()
            .map(|f| f.query_name())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The long-lived stream: one process printing every GPU every `interval_ms`.
    pub fn stream_command(&self, interval_ms: u64) -> String {
        format!(
            "exec nvidia-smi {} --format=csv,noheader,nounits -lms {}",
            shell::quote(&format!("--query-gpu={}", self.names())),
            interval_ms
        )
    }

    /// One look (the low-rate background sampler, and the benchmark's baseline).
    pub fn once_command(&self) -> String {
        format!(
            "nvidia-smi {} --format=csv,noheader,nounits",
            shell::quote(&format!("--query-gpu={}", self.names()))
        )
    }

    /// The fields to try next after nvidia-smi printed `output` and refused a field, or `None`
    /// when it refused nothing we can do without.
    pub fn after_refusal(&self, output: &str) -> Option<Self> {
        let refused = refused_field(output)?;
        let field = Field::from_header(&refused);
        if field == Field::Other || field.required() || !self.0.contains(&field) {
            return None;
        }
        let fields = if field == Field::ClocksEventReasons {
            self.0
                .iter()
                .map(|f| {
                    if *f == Field::ClocksEventReasons {
                        Field::ClocksThrottleReasons
                    } else {
                        *f
                    }
                })
                .collect()
        } else {
            self.0.iter().copied().filter(|f| *f != field).collect()
        };
        Some(Self(fields))
    }
}

/// `Field "x" is not a valid field to query.` → `x`.
pub fn refused_field(output: &str) -> Option<String> {
    output.lines().find_map(|line| {
        let rest = line.trim().strip_prefix("Field \"")?;
        let (name, tail) = rest.split_once('"')?;
        tail.contains("is not a valid field")
            .then(|| name.to_owned())
    })
}

/// The compute-process stream: `timestamp` groups the rows of one look (nvidia-smi prints
/// nothing at all when no process runs, so silence also means "none").
pub fn processes_command(interval_s: u64) -> String {
    format!(
        "exec nvidia-smi --query-compute-apps=timestamp,gpu_uuid,pid,process_name,used_gpu_memory \
         --format=csv,noheader,nounits -l {interval_s}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_event_reasons_field_falls_back_to_the_old_name_then_to_nothing() {
        let fields = QueryFields::default();
        let old = fields
            .after_refusal(
                "Field \"clocks_event_reasons.active\" is not a valid field to query.\n\n",
            )
            .expect("falls back to the pre-535 name");
        assert!(old.0.contains(&Field::ClocksThrottleReasons));
        assert!(!old.0.contains(&Field::ClocksEventReasons));
        let none = old
            .after_refusal(
                "Field \"clocks_throttle_reasons.active\" is not a valid field to query.",
            )
            .expect("then goes without throttle reasons");
        assert!(!none.0.contains(&Field::ClocksThrottleReasons));
        assert!(
            none.after_refusal(
                "Field \"clocks_throttle_reasons.active\" is not a valid field to query."
            )
            .is_none(),
            "refusing a field no longer asked for is not a reason to loop"
        );
    }

    #[test]
    fn required_fields_and_other_failures_are_not_retried() {
        let fields = QueryFields::default();
        assert!(fields
            .after_refusal("Field \"memory.used\" is not a valid field to query.")
            .is_none());
        assert!(fields
            .after_refusal(
                "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."
            )
            .is_none());
        let without_power = fields
            .after_refusal("Field \"power.limit\" is not a valid field to query.")
            .expect("an optional field is dropped");
        assert!(!without_power.0.contains(&Field::PowerLimit));
    }

    #[test]
    fn the_stream_command_is_one_looping_process() {
        let command = QueryFields::default().stream_command(1000);
        assert!(command.starts_with("exec nvidia-smi "));
        assert!(command.contains("--query-gpu=index,count,uuid,utilization.gpu,"));
        assert!(command.ends_with("--format=csv,noheader,nounits -lms 1000"));
    }
}
