// A Go service on sarama 1.22 (Debian's golang-github-shopify-sarama-dev) set to Kafka 2.1.0:
// it produces N records, then consumes them in a consumer group and commits on close
// (OffsetCommit v1, a version Kafka 4.0 removed). Usage: BOOTSTRAP TOPIC GROUP N.
// Prints "produced N" and "consumed N"; exits 1 on any error, after a 20 s deadline at most.
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/Shopify/sarama"
)

type handler struct {
	want     int
	received int
	done     context.CancelFunc
}

func (h *handler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *handler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h *handler) ConsumeClaim(session sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for message := range claim.Messages() {
		session.MarkMessage(message, "")
		h.received++
		if h.received == h.want {
			h.done()
		}
	}
	return nil
}

func fail(what string, err error) {
	fmt.Fprintf(os.Stderr, "%s: %v\n", what, err)
	os.Exit(1)
}

func main() {
	bootstrap, topic, group := os.Args[1], os.Args[2], os.Args[3]
	count, _ := strconv.Atoi(os.Args[4])
	config := sarama.NewConfig()
	config.Version = sarama.V2_1_0_0
	config.ClientID = "sarama-1.22"
	config.Producer.Return.Successes = true
	config.Consumer.Offsets.Initial = sarama.OffsetOldest
	config.Consumer.Offsets.CommitInterval = 100 * time.Millisecond

	producer, err := sarama.NewSyncProducer([]string{bootstrap}, config)
	if err != nil {
		fail("producer", err)
	}
	for i := 0; i < count; i++ {
		message := &sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder("record-" + strconv.Itoa(i))}
		if _, _, err := producer.SendMessage(message); err != nil {
			fail("produce", err)
		}
	}
	producer.Close()
	fmt.Printf("produced %d\n", count)

	consumers, err := sarama.NewConsumerGroup([]string{bootstrap}, group, config)
	if err != nil {
		fail("consumer group", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h := &handler{want: count, done: cancel}
	go func() {
		for err := range consumers.Errors() {
			fmt.Fprintf(os.Stderr, "consumer group error: %v\n", err)
		}
	}()
	for ctx.Err() == nil {
		if err := consumers.Consume(ctx, []string{topic}, h); err != nil {
			fail("consume", err)
		}
	}
	if err := consumers.Close(); err != nil {
		fail("close", err)
	}
	fmt.Printf("consumed %d\n", h.received)
	if h.received != count {
		os.Exit(1)
	}
}
