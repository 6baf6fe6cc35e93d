#!/usr/bin/env node
// kafkajs against the test broker, its fault rule set over the control endpoint (HTTP/JSON):
// `node control_endpoint.js BOOTSTRAP CONTROL_URL TOPIC`. Produce is answered
// NOT_LEADER_OR_FOLLOWER twice; an idempotent producer sends 10 records through it. Prints
// {"rule": id, "fired": n} as read back from the endpoint.
'use strict'

const { Kafka, logLevel } = require('kafkajs')

async function main () {
  const [bootstrap, control, topic] = process.argv.slice(2)
  const call = async (method, path, body) => {
    const answer = await fetch(control + path, {
      method,
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body)
    })
    if (!answer.ok) throw new Error(`${method} ${path}: ${answer.status} ${await answer.text()}`)
    return answer.json()
  }
  const [rule] = await call('POST', '/faults', { api: 'Produce', topic, error: 'NOT_LEADER_OR_FOLLOWER', times: 2 })
  const kafka = new Kafka({
    clientId: 'kafkajs-control',
    brokers: [bootstrap],
    logLevel: logLevel.NOTHING,
    retry: { initialRetryTime: 20, retries: 5 }
  })
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 })
  await producer.connect()
  for (let i = 0; i < 10; i++) {
    await producer.send({ topic, acks: -1, messages: [{ value: String(i) }] })
  }
  await producer.disconnect()
  const rules = await call('GET', '/faults')
  console.log(JSON.stringify({ rule: rule.id, fired: rules.find((each) => each.id === rule.id).fired }))
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
