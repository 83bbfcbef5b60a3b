package events

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record/util"
	"k8s.io/client-go/tools/reference"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	// seriesWindow is how long after its last occurrence an event's repeat
	// joins its series rather than making a new event, as in client-go.
	seriesWindow = 6 * time.Minute
	// maxSeen bounds the events remembered for series; once full, the
	// oldest are forgotten first.
	maxSeen = 4096
	// queueSize bounds the writes waiting; past it events are dropped
	// (and logged), as client-go drops past 1,000.
	queueSize = 1000
	// attempts is how often a write is tried before it is given up.
	attempts = 3
)

// Recorder implements controller-runtime's recorder.EventRecorder. Build
// it with New and run it with Start (it is a manager.Runnable).
type Recorder struct {
	client     client.Client
	scheme     *runtime.Scheme
	controller string
	instance   string
	log        logr.Logger
	now        func() time.Time

	queue chan write

	mu   sync.Mutex
	seen map[uint64]*seen
}

// seen is what a repeat of a recent event needs.
type seen struct {
	namespace, name string
	count           int32
	last            time.Time
	// written is false while the event's create is queued: a repeat
	// before it lands only counts.
	written bool
	// pending is true when count changed since the series was last
	// written.
	pending bool
}

// write is one queued write: a new event, or a series update.
type write struct {
	event  *eventsv1.Event
	key    uint64
	series *eventsv1.EventSeries
}

// New returns a recorder reporting as controller (the events'
// reportingController; the instance is controller-hostname, as in
// controller-runtime).
func New(c client.Client, scheme *runtime.Scheme, controller string, log logr.Logger) *Recorder {
	host, _ := os.Hostname()
	return &Recorder{
		client: c, scheme: scheme, controller: controller, instance: controller + "-" + host,
		log: log, now: time.Now,
		queue: make(chan write, queueSize),
		seen:  map[uint64]*seen{},
	}
}

// Eventf records an event about regarding (and related, when not nil).
func (r *Recorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	r.AnnotatedEventf(regarding, related, nil, eventtype, reason, action, note, args...)
}

// AnnotatedEventf is Eventf with annotations on the event.
func (r *Recorder) AnnotatedEventf(regarding, related runtime.Object, annotations map[string]string, eventtype, reason, action, note string, args ...any) {
	if eventtype != corev1.EventTypeNormal && eventtype != corev1.EventTypeWarning {
		r.log.Error(nil, "unsupported event type, event dropped", "type", eventtype, "reason", reason)
		return
	}
	ref, err := reference.GetReference(r.scheme, regarding)
	if err != nil {
		r.log.Error(err, "no reference for the event's object, event dropped", "reason", reason)
		return
	}
	var relatedRef *corev1.ObjectReference
	if related != nil {
		relatedRef, _ = reference.GetReference(r.scheme, related)
	}
	message := note
	if len(args) > 0 {
		message = fmt.Sprintf(note, args...)
	}
	now := r.now()
	key := eventKey(ref, relatedRef, eventtype, reason, action, message)

	r.mu.Lock()
	if s, ok := r.seen[key]; ok && now.Sub(s.last) < seriesWindow {
		s.count++
		s.last = now
		s.pending = true
		var w *write
		if s.written && s.count == 2 {
			// The first repeat makes the event a series at once, as in
			// client-go; later repeats are written by Flush.
			w = r.seriesWrite(key, s)
		}
		r.mu.Unlock()
		if w != nil {
			r.enqueue(*w)
		}
		return
	}
	namespace := ref.Namespace
	if namespace == "" {
		namespace = metav1.NamespaceDefault
	}
	ev := &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{
			// The name client-go gives: the object's name and the time, or
			// a random one when that is not a valid name.
			Name:        util.GenerateEventName(ref.Name, now.UnixNano()),
			Namespace:   namespace,
			Annotations: annotations,
		},
		EventTime:           metav1.MicroTime{Time: now},
		ReportingController: r.controller,
		ReportingInstance:   r.instance,
		Action:              action,
		Reason:              reason,
		Regarding:           *ref,
		Related:             relatedRef,
		Note:                message,
		Type:                eventtype,
	}
	r.remember(key, &seen{namespace: ev.Namespace, name: ev.Name, count: 1, last: now})
	r.mu.Unlock()
	r.enqueue(write{event: ev, key: key})
}

// remember adds an entry, forgetting the oldest when the table is full.
// The caller holds mu.
func (r *Recorder) remember(key uint64, s *seen) {
	if len(r.seen) >= maxSeen {
		var oldest uint64
		var at time.Time
		for k, v := range r.seen {
			if at.IsZero() || v.last.Before(at) {
				oldest, at = k, v.last
			}
		}
		delete(r.seen, oldest)
	}
	r.seen[key] = s
}

// seriesWrite builds the series update of s. The caller holds mu.
func (r *Recorder) seriesWrite(key uint64, s *seen) *write {
	s.pending = false
	return &write{
		key:    key,
		event:  &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: s.namespace, Name: s.name}},
		series: &eventsv1.EventSeries{Count: s.count, LastObservedTime: metav1.MicroTime{Time: s.last}},
	}
}

func (r *Recorder) enqueue(w write) {
	select {
	case r.queue <- w:
	default:
		r.log.Info("event queue full, event dropped", "reason", w.event.Reason, "event", w.event.Name)
		if w.series == nil {
			// Never written: a repeat must create it, not count on it.
			r.forget(w)
		}
	}
}

// forget drops the entry of w's event, so that its next occurrence is
// created anew.
func (r *Recorder) forget(w write) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.seen[w.key]; ok && s.name == w.event.Name {
		delete(r.seen, w.key)
	}
}

// Start writes queued events until ctx ends, and once a minute writes the
// counts of series that grew and forgets events older than the series
// window.
func (r *Recorder) Start(ctx context.Context) error {
	tick := time.NewTicker(time.Minute)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case w := <-r.queue:
			r.write(ctx, w)
		case <-tick.C:
			r.Flush()
		}
	}
}

// NeedLeaderElection is false: every replica reports its own events.
func (r *Recorder) NeedLeaderElection() bool { return false }

// Flush queues the series updates due and forgets old events.
func (r *Recorder) Flush() {
	now := r.now()
	var due []write
	r.mu.Lock()
	for k, s := range r.seen {
		if s.pending && s.written {
			due = append(due, *r.seriesWrite(k, s))
		}
		if now.Sub(s.last) >= seriesWindow && !s.pending {
			delete(r.seen, k)
		}
	}
	r.mu.Unlock()
	for _, w := range due {
		r.enqueue(w)
	}
}

func (r *Recorder) write(ctx context.Context, w write) {
	var err error
	for i := range attempts {
		if i > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Duration(i) * time.Second):
			}
		}
		if w.series == nil {
			err = r.client.Create(ctx, w.event)
			if apierrors.IsAlreadyExists(err) {
				err = nil
			}
		} else {
			patch := fmt.Appendf(nil, `{"series":{"count":%d,"lastObservedTime":%q}}`,
				w.series.Count, w.series.LastObservedTime.UTC().Format(metav1.RFC3339Micro))
			err = r.client.Patch(ctx, w.event, client.RawPatch(types.MergePatchType, patch))
		}
		if err == nil || apierrors.IsNotFound(err) || apierrors.IsInvalid(err) || apierrors.IsForbidden(err) {
			break
		}
	}
	if err != nil {
		r.log.Info("event not written", "event", w.event.Name, "namespace", w.event.Namespace, "error", err.Error())
		// A create that failed, or a series whose event is gone (deleted,
		// expired): the next occurrence creates a new event rather than
		// counting on one that does not exist.
		r.forget(w)
		return
	}
	if w.series == nil {
		r.mu.Lock()
		if s, ok := r.seen[w.key]; ok && s.name == w.event.Name {
			s.written = true
			if s.count >= 2 && s.pending {
				// Repeated while the create was queued.
				sw := r.seriesWrite(w.key, s)
				r.mu.Unlock()
				r.enqueue(*sw)
				return
			}
		}
		r.mu.Unlock()
	}
}

// eventKey identifies repeats: the same object, related object, type,
// reason, action and message.
func eventKey(ref, related *corev1.ObjectReference, eventtype, reason, action, message string) uint64 {
	h := fnv.New64a()
	for _, s := range []string{ref.APIVersion, ref.Kind, ref.Namespace, ref.Name, string(ref.UID), eventtype, reason, action, message} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	if related != nil {
		for _, s := range []string{related.APIVersion, related.Kind, related.Namespace, related.Name, string(related.UID)} {
			h.Write([]byte(s))
			h.Write([]byte{0})
		}
	}
	return h.Sum64()
}
