#!/usr/bin/env node
// kafkajs driver: `node driver.js '<command json>'`.
// Speaks the command/observation schema defined in compat/schema.py (keep in step with it).
'use strict'

const readline = require('readline')
const { Kafka, logLevel, PartitionAssigners } = require('kafkajs')

function emit (event, fields = {}) {
  process.stdout.write(JSON.stringify({ event, ts: Date.now() / 1000, ...fields }) + '\n')
}

const messageKey = (i, keyCount) => `key-${i % keyCount}`
const messageValue = (i) => String(i)

// kafkajs ships only the round-robin assigner; "range" is expressed with it as
// the closest built-in (both give every member a share; neither is sticky).
function assigners (name) {
  if (name === 'cooperative-sticky') throw new Error('kafkajs has no cooperative-sticky assigner')
  return [PartitionAssigners.roundRobin]
}

function client (command) {
  return new Kafka({
    clientId: command.client_id,
    brokers: [command.bootstrap],
    logLevel: logLevel.ERROR,
    // Short, explicit retries: a test wants a prompt failure, not minutes of backoff.
    retry: { retries: 5, initialRetryTime: 100 }
  })
}

function groupConsumer (kafka, command) {
  return kafka.consumer({
    groupId: command.group,
    sessionTimeout: command.session_timeout_ms,
    partitionAssigners: assigners(command.assignor)
  })
}

async function createTopic (command) {
  const admin = client(command).admin()
  await admin.connect()
  try {
    // Resolves false (no error) when the topic already exists.
    await admin.createTopics({
      topics: [{ topic: command.topic, numPartitions: command.partitions, replicationFactor: 1 }],
      waitForLeaders: true
    })
  } finally {
    await admin.disconnect()
  }
  emit('created', { topic: command.topic })
}

async function produce (command) {
  const producer = client(command).producer()
  await producer.connect()
  try {
    const messages = []
    for (let i = 0; i < command.count; i++) {
      messages.push({ key: messageKey(i, command.key_count), value: messageValue(i) })
    }
    await producer.send({ topic: command.topic, messages })
  } finally {
    await producer.disconnect()
  }
  emit('produced', { count: command.count })
}

async function consume (command) {
  const consumer = groupConsumer(client(command), command)
  await consumer.connect()
  const positions = {}
  let received = 0
  let finished
  const done = new Promise((resolve) => { finished = resolve })
  emit('subscribing', { group: command.group })
  await consumer.subscribe({ topic: command.topic, fromBeginning: true })
  await consumer.run({
    autoCommit: false,
    eachMessage: async ({ partition, message }) => {
      received++
      positions[partition] = Number(message.offset) + 1
      emit('message', {
        partition,
        offset: Number(message.offset),
        key: message.key.toString(),
        value: message.value.toString()
      })
      if (received >= command.count) finished()
    }
  })
  const timer = setTimeout(finished, command.timeout_s * 1000)
  await done
  clearTimeout(timer)
  const offsets = Object.entries(positions).map(([partition, offset]) => (
    { topic: command.topic, partition: Number(partition), offset: String(offset) }))
  await consumer.commitOffsets(offsets)
  emit('committed', { offsets: positions })
  await consumer.disconnect()
}

async function offsets (command) {
  const admin = client(command).admin()
  await admin.connect()
  try {
    const [committedTopic] = await admin.fetchOffsets({ groupId: command.group, topics: [command.topic] })
    const latest = await admin.fetchTopicOffsets(command.topic)
    const committed = {}
    for (const { partition, offset } of committedTopic.partitions) {
      if (Number(offset) >= 0) committed[partition] = Number(offset)
    }
    emit('offsets', {
      committed,
      latest: Object.fromEntries(latest.map(({ partition, offset }) => [partition, Number(offset)]))
    })
  } finally {
    await admin.disconnect()
  }
}

async function member (command) {
  const consumer = groupConsumer(client(command), command)
  const { GROUP_JOIN } = consumer.events
  // kafkajs reports the full assignment of each completed join; it does not expose the generation.
  consumer.on(GROUP_JOIN, ({ payload }) => {
    const partitions = (payload.memberAssignment[command.topic] || []).slice().sort((a, b) => a - b)
    emit('assignment', { partitions, generation: null })
  })
  await consumer.connect()
  emit('subscribing', { group: command.group })
  await consumer.subscribe({ topic: command.topic, fromBeginning: true })
  await consumer.run({ eachMessage: async () => {} })
  await new Promise((resolve) => {
    const lines = readline.createInterface({ input: process.stdin })
    lines.on('line', (line) => { if (line.trim() === 'close') resolve() })
    lines.on('close', resolve)
  })
  await consumer.disconnect()
  emit('closed')
}

const OPS = { create_topic: createTopic, produce, consume, offsets, member }

async function main () {
  if (process.argv.length !== 3) {
    process.stderr.write("usage: node driver.js '<command json>'\n")
    process.exit(2)
  }
  const command = JSON.parse(process.argv[2])
  emit('ready', { op: command.op })
  const op = OPS[command.op]
  if (!op) throw new Error(`unknown op ${command.op}`)
  await op(command)
}

main().then(() => process.exit(0), (error) => {
  process.stderr.write(`${error.stack || error}\n`)
  emit('error', { message: `${error.name}: ${error.message}` })
  process.exit(1)
})
