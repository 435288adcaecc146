package tracing

import (
	"context"
	"encoding/json"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/riverqueue/rivercontrib/otelriver"
)

// metadataKey is the key of a job's metadata holding the W3C traceparent of
// the span that inserted it.
const metadataKey = "traceparent"

// RiverMiddleware is what a River client installs (river.Config.Middleware)
// to carry traces through its jobs, nil when tracing is off: River's own
// OpenTelemetry middleware (otelriver: a producer span per insert, a
// consumer span per attempt, named river.work/<kind>), beneath it the
// insertion of the inserting span's traceparent into each job's metadata,
// and above it its extraction as the parent of the attempt's span. So a
// job's spans are in the trace of the request or job that inserted it, in
// another process as well.
func RiverMiddleware() []rivertype.Middleware {
	if !Enabled() {
		return nil
	}
	return []rivertype.Middleware{
		&jobParent{}, // works first: the attempt's ctx carries the job's parent
		otelriver.NewMiddleware(&otelriver.MiddlewareConfig{EnableWorkSpanJobKindSuffix: true}),
		&jobStamp{}, // inserts last: inside otelriver's insert span
	}
}

// JobMetadata is the metadata of a job inserted on behalf of ctx's span
// (river.InsertOpts.Metadata), nil without one: for the jobs inserted
// together for several requests (a group of sales), each its own parent.
func JobMetadata(ctx context.Context) []byte {
	return JobMetadataOf(Parent(ctx))
}

// JobMetadataOf is the metadata of a job whose parent is the W3C
// traceparent parent (kept with a record, as an outbox event keeps it), nil
// for "".
func JobMetadataOf(parent string) []byte {
	if parent == "" || !Enabled() {
		return nil
	}
	b, _ := json.Marshal(map[string]string{metadataKey: parent}) // a map of strings always marshals
	return b
}

// jobStamp writes the inserting span's traceparent into the metadata of
// each job that does not carry one already.
type jobStamp struct{ river.MiddlewareDefaults }

func (*jobStamp) InsertMany(ctx context.Context, many []*rivertype.JobInsertParams,
	doInner func(context.Context) ([]*rivertype.JobInsertResult, error),
) ([]*rivertype.JobInsertResult, error) {
	parent := Parent(ctx)
	if parent == "" {
		return doInner(ctx)
	}
	for _, p := range many {
		meta := map[string]any{}
		if len(p.Metadata) > 0 && json.Unmarshal(p.Metadata, &meta) != nil {
			continue // not an object: left as River will refuse or keep it
		}
		if _, has := meta[metadataKey]; has {
			continue
		}
		meta[metadataKey] = parent
		b, err := json.Marshal(meta)
		if err != nil {
			return nil, err
		}
		p.Metadata = b
	}
	return doInner(ctx)
}

// jobParent makes the traceparent of a job's metadata the parent of its
// attempt.
type jobParent struct{ river.MiddlewareDefaults }

func (*jobParent) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	var meta struct {
		Parent string `json:"traceparent"`
	}
	if json.Unmarshal(job.Metadata, &meta) == nil {
		ctx = FromParent(ctx, meta.Parent)
	}
	return doInner(ctx)
}
