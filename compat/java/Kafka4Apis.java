// The client APIs KafkaDriver uses that kafka-clients 4.0 added (KIP-848 regex subscriptions,
// KIP-1043 group listing, GroupState). Kept apart so that KafkaDriver also compiles against
// kafka-clients 3.9: compat/java_build.py leaves this file out of that build, and the steps
// that need it then fail with that reason (KafkaDriver.kafka4).

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.SubscriptionPattern;

public final class Kafka4Apis implements KafkaDriver.Kafka4 {
    @Override
    public void subscribePattern(KafkaConsumer<?, ?> consumer, String pattern, ConsumerRebalanceListener listener) {
        // Resolved by the broker (RE2/J), as KIP-848 subscriptions by pattern are.
        consumer.subscribe(new SubscriptionPattern(pattern), listener);
    }

    @Override
    public List<String> groupIds(Admin admin, long timeoutMs) throws Exception {
        List<String> ids = new ArrayList<>();
        for (GroupListing listing : admin.listGroups().all().get(timeoutMs, TimeUnit.MILLISECONDS)) {
            ids.add(listing.groupId());
        }
        return ids;
    }

    @Override
    public String groupState(ConsumerGroupDescription description) {
        return description.groupState().name();
    }
}
