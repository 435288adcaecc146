-- 0032 (issue 35): an event keeps the W3C traceparent of the span that
-- recorded it, when traced, so that its webhook deliveries join the trace.
ALTER TABLE `events` ADD COLUMN `trace_parent` text NULL;
