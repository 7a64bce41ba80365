package scaleout

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/politeness"
)

// Names of the JetStream objects linkrot uses.
const (
	// StreamName is the work-queue stream of every run.
	StreamName = "LINKROT_WORK"
	// SubjectPrefix starts the subjects of the work:
	// linkrot.work.<run>.<partition>.
	SubjectPrefix = "linkrot.work"
	// ProgressPrefix starts the core NATS subjects the workers report
	// progress on: linkrot.progress.<run> (display only, may be lost).
	ProgressPrefix = "linkrot.progress"
	// SeenBucket is the KV bucket of the runs' seen sets.
	SeenBucket = "LINKROT_SEEN"
	// HostsBucket is the KV bucket of the hosts' shared pacing state.
	HostsBucket = "LINKROT_HOSTS"
	// AnchorsBucket is the KV bucket of the anchors of targets checked
	// live that #fragment links need.
	AnchorsBucket = "LINKROT_ANCHORS"
	// DefaultPartitions is the number of work partitions (consumers).
	DefaultPartitions = 16
	// DefaultAckWait is how long a worker may hold a unit without telling
	// the server it is still on it (it does, every third of it).
	DefaultAckWait = 30 * time.Second
	// DefaultDeadAfter is the delivery after which a unit is given up
	// and recorded as a dead letter.
	DefaultDeadAfter = 5
	// dupWindow is the stream's Nats-Msg-Id deduplication window.
	dupWindow = 2 * time.Hour
	// runTTL is how long a run's seen set and anchors are kept.
	runTTL = 30 * 24 * time.Hour
)

// Kind is what a unit of work does.
type Kind string

// The kinds of work.
const (
	// KindCrawl fetches one page of the audited site, stores it with
	// its links, publishes what it adds to the run, and judges the
	// page's own URL from its response.
	KindCrawl Kind = "crawl"
	// KindCheck checks one target live.
	KindCheck Kind = "check"
)

// Unit is one message of the work queue.
type Unit struct {
	// Run is the run's ID in the store; Key names it on the queue
	// (RunKey).
	Run   int64  `json:"run"`
	Key   string `json:"key"`
	Kind  Kind   `json:"kind"`
	URL   string `json:"url"`
	Depth int    `json:"depth,omitempty"`
}

// Host returns the politeness key (host[:port]) of the unit's URL, ""
// for a URL without host.
func (u Unit) Host() string {
	p, err := url.Parse(u.URL)
	if err != nil || p.Host == "" {
		return ""
	}
	return politeness.Key(p)
}

// Partition returns the partition of a host: FNV-1a of the host modulo
// n. Every unit of a host goes to one partition, whichever run.
func Partition(host string, n int) int {
	if n <= 1 {
		return 0
	}
	h := fnv.New32a()
	h.Write([]byte(host))
	return int(h.Sum32() % uint32(n))
}

// Subject returns the subject of a run's partition.
func Subject(key string, part int) string {
	return SubjectPrefix + "." + key + "." + strconv.Itoa(part)
}

// RunKey names a run on the queue: its ID and a digest of its start and
// seeds, so that the runs of two databases sharing a NATS server (or of a
// database made again) never share a seen set. Subject- and key-safe.
func RunKey(run *audit.Run) string {
	return strconv.FormatInt(run.ID, 10) + "-" + digest(strconv.FormatInt(run.StartedAt.Unix(), 10) + "\x00" + strings.Join(run.Seeds, "\x00"))[:12]
}

// ConsumerName returns the durable consumer of a partition.
func ConsumerName(part int) string { return fmt.Sprintf("linkrot-part-%03d", part) }

// digest is a key-safe digest of s.
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}

// MsgID returns the Nats-Msg-Id of a unit: the same unit published twice
// (a redelivered parent publishing its children again) is stored once.
func MsgID(u Unit) string {
	return u.Key + "." + string(u.Kind) + "." + digest(u.URL)
}

// Options configures the queue.
type Options struct {
	// Partitions is the number of partitions (0: DefaultPartitions).
	// Every process of a deployment must use the same number.
	Partitions int
	// AckWait is the consumers' ack wait (0: DefaultAckWait).
	AckWait time.Duration
}

func (o Options) withDefaults() Options {
	if o.Partitions <= 0 {
		o.Partitions = DefaultPartitions
	}
	if o.AckWait <= 0 {
		o.AckWait = DefaultAckWait
	}
	return o
}

// Queue is linkrot's work on one JetStream: the stream, its consumers and
// the KV buckets. It is safe for concurrent use.
type Queue struct {
	o       Options
	nc      *nats.Conn
	js      jetstream.JetStream
	stream  jetstream.Stream
	seen    jetstream.KeyValue
	hosts   jetstream.KeyValue
	anchors jetstream.KeyValue
}

// Connect connects to the NATS server at addr. Credentials come from the
// environment, never from the command line or the run's settings:
// LINKROT_NATS_USER and LINKROT_NATS_PASSWORD, LINKROT_NATS_TOKEN, or
// LINKROT_NATS_CREDS (a credentials file). An unreachable server is an
// error at once (no retry loop).
func Connect(addr, name string) (*nats.Conn, error) {
	opts := []nats.Option{nats.Name(name), nats.Timeout(5 * time.Second), nats.MaxReconnects(-1), nats.ReconnectWait(500 * time.Millisecond)}
	if u, p := os.Getenv("LINKROT_NATS_USER"), os.Getenv("LINKROT_NATS_PASSWORD"); u != "" {
		opts = append(opts, nats.UserInfo(u, p))
	}
	if t := os.Getenv("LINKROT_NATS_TOKEN"); t != "" {
		opts = append(opts, nats.Token(t))
	}
	if f := os.Getenv("LINKROT_NATS_CREDS"); f != "" {
		opts = append(opts, nats.UserCredentials(f))
	}
	nc, err := nats.Connect(addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to NATS at %s: %w", redactAddr(addr), err)
	}
	return nc, nil
}

// redactAddr drops a password from a NATS URL for messages.
func redactAddr(addr string) string {
	u, err := url.Parse(addr)
	if err != nil || u.User == nil {
		return addr
	}
	return u.Redacted()
}

// Open makes sure the stream and the KV buckets exist (creating them on
// first use) and returns the queue.
func Open(ctx context.Context, nc *nats.Conn, o Options) (*Queue, error) {
	o = o.withDefaults()
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	q := &Queue{o: o, nc: nc, js: js}
	q.stream, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:        StreamName,
		Description: "linkrot: crawl and check units of audit runs",
		Subjects:    []string{SubjectPrefix + ".>"},
		Retention:   jetstream.WorkQueuePolicy,
		Storage:     jetstream.FileStorage,
		Duplicates:  dupWindow,
	})
	if err != nil {
		return nil, fmt.Errorf("jetstream: stream %s (is JetStream enabled on the server? nats-server -js): %w", StreamName, err)
	}
	for _, b := range []struct {
		dst  *jetstream.KeyValue
		name string
		desc string
	}{
		{&q.seen, SeenBucket, "linkrot: each run's seen set (first writer wins)"},
		{&q.hosts, HostsBucket, "linkrot: next request slot and pause of each host"},
		{&q.anchors, AnchorsBucket, "linkrot: anchors of targets checked live"},
	} {
		cfg := jetstream.KeyValueConfig{Bucket: b.name, Description: b.desc, Storage: jetstream.FileStorage}
		if b.name != HostsBucket {
			cfg.TTL = runTTL // a run's entries are of no use after it
		}
		kv, err := js.CreateOrUpdateKeyValue(ctx, cfg)
		if err != nil {
			return nil, fmt.Errorf("jetstream: key-value bucket %s: %w", b.name, err)
		}
		*b.dst = kv
	}
	return q, nil
}

// Partitions returns the number of partitions.
func (q *Queue) Partitions() int { return q.o.Partitions }

// EnsureConsumers creates (or updates) the durable pull consumer of each
// partition with MaxAckPending perHost: the server lets at most perHost
// units of a partition, and so of a host, be worked on at once, however
// many workers fetch from it. Redelivery is unbounded on the server
// (MaxDeliver -1): a unit that exhausted MaxDeliver would stay in the
// work-queue stream for ever and the run would never drain; the workers
// give a unit up after DeadAfter deliveries instead, recording it.
func (q *Queue) EnsureConsumers(ctx context.Context, perHost int) error {
	for p := range q.o.Partitions {
		_, err := q.stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
			Durable:       ConsumerName(p),
			Description:   "linkrot work partition " + strconv.Itoa(p),
			FilterSubject: SubjectPrefix + ".*." + strconv.Itoa(p),
			AckPolicy:     jetstream.AckExplicitPolicy,
			AckWait:       q.o.AckWait,
			MaxDeliver:    -1,
			MaxAckPending: max(perHost, 1),
			DeliverPolicy: jetstream.DeliverAllPolicy,
		})
		if err != nil {
			return fmt.Errorf("jetstream: consumer %s: %w", ConsumerName(p), err)
		}
	}
	return nil
}

// consumers returns the partitions' consumers, waiting until a
// coordinator created them.
func (q *Queue) consumers(ctx context.Context) ([]jetstream.Consumer, error) {
	out := make([]jetstream.Consumer, q.o.Partitions)
	for p := range out {
		for {
			c, err := q.stream.Consumer(ctx, ConsumerName(p))
			if err == nil {
				out[p] = c
				break
			}
			if !errors.Is(err, jetstream.ErrConsumerNotFound) {
				return nil, fmt.Errorf("jetstream: consumer %s: %w", ConsumerName(p), err)
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Second):
			}
		}
	}
	return out, nil
}

// Publish enqueues a unit on its host's partition, deduplicated by its
// Nats-Msg-Id. It returns once the server stored it.
func (q *Queue) Publish(ctx context.Context, u Unit) error {
	b, err := json.Marshal(u)
	if err != nil {
		return err
	}
	subj := Subject(u.Key, Partition(u.Host(), q.o.Partitions))
	if _, err := q.js.Publish(ctx, subj, b, jetstream.WithMsgID(MsgID(u))); err != nil {
		return fmt.Errorf("publish %s unit %s: %w", u.Kind, u.URL, err)
	}
	return nil
}

// Pending returns how many units of a run are in the stream: queued or
// being worked on (a unit leaves the work-queue stream when it is acked,
// after the units it produced were published).
func (q *Queue) Pending(ctx context.Context, key string) (uint64, error) {
	filter := SubjectPrefix + "." + key + ".>"
	info, err := q.stream.Info(ctx, jetstream.WithSubjectFilter(filter))
	if err != nil {
		return 0, fmt.Errorf("jetstream: stream info: %w", err)
	}
	var n uint64
	for _, c := range info.State.Subjects {
		n += c
	}
	return n, nil
}
