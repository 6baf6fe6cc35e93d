#!/usr/bin/env node
// kafkajs driver: `node driver.js '<command json>'`.
// Speaks the command/observation schema defined in compat/schema.py (keep in step with it).
'use strict'

const fs = require('fs')
const readline = require('readline')
const { Kafka, logLevel, PartitionAssigners } = require('kafkajs')

function emit (event, fields = {}) {
  process.stdout.write(JSON.stringify({ event, ts: Date.now() / 1000, ...fields }) + '\n')
}

// A swarm member's observations carry its label ({ member, group }).
function emitFor (label, event, fields = {}) {
  emit(event, { ...label, ...fields })
}

const messageKey = (i, keyCount) => `key-${i % keyCount}`
const messageValue = (i) => String(i)

// kafkajs ships only the round-robin assigner: asking for another is an error, never a
// silent substitute (the harness reports such scenarios as not applicable).
function assigners (name) {
  if (name !== 'roundrobin') throw new Error(`kafkajs 2.2.4 has no ${name} assigner`)
  return [PartitionAssigners.roundRobin]
}

// command.security (librdkafka's names, see compat/schema.py) in kafkajs' terms.
function security (settings = {}) {
  const protocol = (settings['security.protocol'] || 'plaintext').toLowerCase()
  const options = {}
  if (protocol.endsWith('ssl')) {
    options.ssl = { ca: [fs.readFileSync(settings['ssl.ca.location'], 'utf8')] }
    if (settings['ssl.certificate.location']) {
      options.ssl.cert = fs.readFileSync(settings['ssl.certificate.location'], 'utf8')
      options.ssl.key = fs.readFileSync(settings['ssl.key.location'], 'utf8')
    }
  }
  if (protocol.startsWith('sasl')) {
    options.sasl = {
      mechanism: settings['sasl.mechanism'].toLowerCase(),
      username: settings['sasl.username'],
      password: settings['sasl.password']
    }
  }
  return options
}

function client (command) {
  return new Kafka({
    clientId: command.client_id,
    brokers: [command.bootstrap],
    ...security(command.security),
    logLevel: logLevel.ERROR,
    // Short, explicit retries: a test wants a prompt failure, not minutes of backoff.
    retry: { retries: 5, initialRetryTime: 100 }
  })
}

function groupConsumer (kafka, command, isolation = command.isolation) {
  return kafka.consumer({
    groupId: command.group,
    sessionTimeout: command.session_timeout_ms,
    partitionAssigners: assigners(command.assignor),
    readUncommitted: isolation !== 'read_committed'
  })
}

// A record's key or value as text; null (a keyless record) is reported, not hidden.
const decoded = (data) => (data === null ? null : data.toString())

// Every ABORT_EVERY-th transaction of `transact` is aborted on purpose, then retried.
const ABORT_EVERY = 3
const TRANSACTION_RECORDS = 10

// The consume-transform-produce loop of compat/schema.py's `transact`: kafkajs hands
// over one partition's batch at a time, run as transactions of up to TRANSACTION_RECORDS.
async function transact (command) {
  const kafka = client(command)
  const consumer = groupConsumer(kafka, command, 'read_committed')
  const producer = kafka.producer({
    transactionalId: command.transactional_id,
    idempotent: true,
    maxInFlightRequests: 1
  })
  await producer.connect()
  await consumer.connect()
  await consumer.subscribe({ topic: command.topic, fromBeginning: true })
  let committed = 0
  let aborted = 0
  let transactions = 0
  let finished
  const done = new Promise((resolve) => { finished = resolve })
  await consumer.run({
    autoCommit: false,
    eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
      for (let start = 0; start < batch.messages.length && committed < command.count; start += TRANSACTION_RECORDS) {
        const records = batch.messages.slice(start, start + TRANSACTION_RECORDS)
        const next = Number(records[records.length - 1].offset) + 1
        transactions++
        const attempts = transactions % ABORT_EVERY === 0 ? [false, true] : [true]
        for (const commit of attempts) {
          const txn = await producer.transaction()
          await txn.send({
            topic: command.output,
            messages: records.map((m) => ({ key: m.key, value: m.value }))
          })
          if (commit) {
            await txn.sendOffsets({
              consumerGroupId: command.group,
              topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: String(next) }] }]
            })
            await txn.commit()
            committed += records.length
          } else {
            await txn.abort()
            aborted += records.length
          }
          emit('transaction', { outcome: commit ? 'commit' : 'abort', records: records.length })
        }
        resolveOffset(records[records.length - 1].offset)
        await heartbeat()
      }
      if (committed >= command.count) finished()
    }
  })
  const timer = setTimeout(finished, command.timeout_s * 1000)
  await done
  clearTimeout(timer)
  emit('transacted', { committed, aborted })
  await consumer.disconnect()
  await producer.disconnect()
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
      // Messages still arriving after the count was reached are neither reported nor
      // committed: what was observed is exactly what the commit covers.
      if (received >= command.count) return
      received++
      positions[partition] = Number(message.offset) + 1
      emit('message', {
        partition,
        offset: Number(message.offset),
        key: decoded(message.key),
        value: decoded(message.value)
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

async function startMember (command, label = {}) {
  const consumer = groupConsumer(client(command), command)
  const { GROUP_JOIN } = consumer.events
  // kafkajs reports the full assignment of each completed join; it does not expose the generation.
  consumer.on(GROUP_JOIN, ({ payload }) => {
    const partitions = (payload.memberAssignment[command.topic] || []).slice().sort((a, b) => a - b)
    emitFor(label, 'assignment', { partitions, generation: null })
  })
  await consumer.connect()
  emitFor(label, 'subscribing', { group: command.group })
  await consumer.subscribe({ topic: command.topic, fromBeginning: true })
  await consumer.run({ eachMessage: async () => {} })
  return consumer
}

function closeRequested () {
  return new Promise((resolve) => {
    const lines = readline.createInterface({ input: process.stdin })
    lines.on('line', (line) => { if (line.trim() === 'close') resolve() })
    lines.on('close', resolve)
  })
}

async function member (command) {
  const consumer = await startMember(command)
  await closeRequested()
  await consumer.disconnect()
  emit('closed')
}

// Many members in this one process: groups `${group}-${i}` of `members` members each.
async function swarm (command) {
  const starting = []
  for (let i = 0; i < command.groups; i++) {
    const group = `${command.group}-${i}`
    for (let j = 0; j < command.members; j++) {
      const label = { member: `${i}/${j}`, group }
      const memberCommand = { ...command, group, client_id: `${group}-${j}` }
      starting.push(startMember(memberCommand, label).then((consumer) => ({ consumer, label })))
    }
  }
  const members = await Promise.all(starting)
  await closeRequested()
  await Promise.all(members.map(async ({ consumer, label }) => {
    await consumer.disconnect()
    emitFor(label, 'closed')
  }))
}

// The admin steps of compat/schema.py ADMIN_STEPS, with kafkajs's admin client.
async function admin (command) {
  const kafka = client(command)
  const api = kafka.admin()
  await api.connect()
  const topic = command.topic
  const extra = `${topic}-extra`
  const groups = [command.group, command.other_group]
  const listedGroups = async () => {
    const { groups: listed } = await api.listGroups()
    return listed.map((g) => g.groupId).filter((g) => groups.includes(g)).sort()
  }
  const adminOffsets = Array.from({ length: command.partitions }, (_, p) => ({ partition: p, offset: String(p + 1) }))
  const steps = [
    ['create_topics', async () => {
      await api.createTopics({
        topics: [topic, extra].map((t) => ({ topic: t, numPartitions: command.partitions, replicationFactor: 1 })),
        waitForLeaders: true
      })
      return null
    }],
    ['delete_topics', async () => { await api.deleteTopics({ topics: [extra] }); return null }],
    ['list_topics', async () => (await api.listTopics()).filter((t) => t === topic || t === extra).sort()],
    ['alter_offsets', async () => {
      await api.setOffsets({ groupId: command.group, topic, partitions: adminOffsets })
      return null
    }],
    ['list_offsets', async () => {
      const [found] = await api.fetchOffsets({ groupId: command.group, topics: [topic] })
      return Object.fromEntries(found.partitions.filter((p) => Number(p.offset) >= 0)
        .map((p) => [p.partition, Number(p.offset)]))
    }],
    ['list_groups', listedGroups],
    ['describe_groups', async () => {
      const { groups: described } = await api.describeGroups(groups)
      return Object.fromEntries(described.map((g) => [
        g.groupId, { state: g.state.replace(/[_ ]/g, '').toUpperCase(), members: g.members.length }]))
    }],
    ['delete_live_group', async () => { await api.deleteGroups([command.other_group]); return null }],
    ['delete_group', async () => { await api.deleteGroups([command.group]); return null }],
    ['list_groups_after', listedGroups]
  ]
  try {
    for (const [step, action] of steps) {
      try {
        emit('admin_step', { step, error: null, result: await action(), unsupported: null })
      } catch (error) {
        const name = kafkaErrorName(error)
        if (name === null) throw error
        emit('admin_step', { step, error: name, result: null, unsupported: null })
      }
    }
  } finally {
    await api.disconnect()
  }
}

// Kafka's error name behind a kafkajs error (deleteGroups wraps one per group), or null.
function kafkaErrorName (error) {
  if (error.groups && error.groups.length) return kafkaErrorName(error.groups[0].error)
  return error.type || null
}

// compat/schema.py's `fence`: a second producer of one transactional id fences the first.
const FENCE_VALUES = ['before', 'zombie', 'after', 'late']

async function fence (command) {
  const [before, zombieValue, after, late] = FENCE_VALUES
  const kafka = client(command)
  const transactional = () => kafka.producer({
    transactionalId: command.transactional_id,
    idempotent: true,
    maxInFlightRequests: 1
  })
  const zombie = transactional()
  const successor = transactional()
  await zombie.connect()
  await successor.connect()
  try {
    const first = await zombie.transaction()
    await first.send({ topic: command.output, messages: [{ value: before }] })
    await first.commit()
    const open = await zombie.transaction()
    await open.send({ topic: command.output, messages: [{ value: zombieValue }] })
    const next = await successor.transaction() // InitProducerId with the same id fences the zombie
    await next.send({ topic: command.output, messages: [{ value: after }] })
    await next.commit()
    try {
      await open.send({ topic: command.output, messages: [{ value: late }] })
      await open.commit()
    } catch (error) {
      emit('fenced', { error: `${error.name}: ${error.type || ''} ${error.message}` })
      return
    }
    throw new Error('the fenced producer committed')
  } finally {
    await successor.disconnect()
    await zombie.disconnect()
  }
}

const OPS = { create_topic: createTopic, produce, consume, offsets, member, swarm, admin, transact, fence }

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
