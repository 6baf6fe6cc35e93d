"""Busy polling stops for a while after a poll that was preempted, or when the thread waited
for its core (shim.net.polling)."""

from __future__ import annotations

import struct
import sys
import threading
import time

import trio
import trio.testing

from kafka_shim.shim.net.framing import FrameReader, MemoryGate
from kafka_shim.shim.net.polling import OFF_S, Polling, for_this_thread


def test_a_poll_that_kept_its_core_keeps_polling() -> None:
    polling = Polling()
    now = time.monotonic()
    polling.polled(now, time.thread_time(), now)  # no wall time passed without the CPU
    assert polling.off_until == 0.0


def test_a_preempted_poll_stops_polling_for_a_while() -> None:
    polling = Polling()
    now = time.monotonic()
    # A second of wall time the thread did not get: another thread had its core.
    polling.polled(now - 1.0, time.thread_time(), now)
    assert polling.off_until == now + OFF_S


def test_a_reader_whose_poll_lost_the_core_stops_polling() -> None:
    frame = struct.pack(">ih", 2, 18)  # a request's length and api key: all the reader looks at

    async def main() -> None:
        ours, peer = trio.socket.socketpair()
        reader = FrameReader(ours, 1 << 20, MemoryGate(1 << 20), busy_poll_s=60.0)
        async with trio.open_nursery() as nursery:

            async def send_later(lose_core: bool) -> None:
                if lose_core:  # the thread blocks: wall time passes, its CPU time does not
                    await trio.sleep(0)
                    time.sleep(0.01)
                else:  # once the reader waits in epoll
                    await trio.testing.wait_all_tasks_blocked()
                await peer.send(frame)

            for _ in range(2):  # waited briefly after a request of this kind: quick from now on
                nursery.start_soon(send_later, False)
                assert await reader.next_frame() == frame[4:]
            nursery.start_soon(send_later, True)
            assert await reader.next_frame() == frame[4:]  # polled for it, and lost the core
        assert polling.off_until > 0.0  # set: nobody on this thread polls until then
        ours.close()
        peer.close()

    polling = for_this_thread()
    polling.off_until = 0.0
    try:
        trio.run(main)
    finally:
        polling.off_until = 0.0


def test_a_thread_that_waited_for_its_core_stops_polling() -> None:
    polling = Polling()
    polling.waited(10.0, 5.0)  # the first look only notes the wait so far
    polling.waited(10.1, 5.001)  # 1 % of the time since: alone on its core
    assert polling.off_until == 0.0
    polling.waited(10.2, 5.031)  # 30 %: other threads had the core
    assert polling.off_until == 10.2 + OFF_S


def test_a_look_reads_the_threads_run_queue_wait() -> None:
    # On Linux the look reads the file and looks again later; elsewhere it gives up looking
    # and polls go on, judged by themselves.
    polling = Polling()
    now = time.monotonic()
    assert polling.may_poll(now)  # the first look only notes the wait so far
    if sys.platform == "linux":
        assert polling._looked_at == now
        assert polling._next_look < float("inf")


def test_each_thread_judges_its_own_core() -> None:
    # Brokers on threads of one process (the pytest plugin): one thread's preempted poll
    # says nothing of another's core, nor is one's run-queue wait compared with another's.
    ours = for_this_thread()
    theirs: list[Polling] = []

    def other_thread() -> None:
        polling = for_this_thread()
        now = time.monotonic()
        polling.polled(now - 1.0, time.thread_time(), now)  # preempted
        theirs.append(polling)

    thread = threading.Thread(target=other_thread)
    thread.start()
    thread.join()
    assert theirs[0] is not ours
    assert theirs[0].off_until > 0.0
    assert ours.off_until < time.monotonic()
    assert for_this_thread() is ours


def test_quickness_is_kept_per_kind_of_request() -> None:
    # A transactional producer's EndTxn follows an answer at once, its next AddPartitionsToTxn
    # comes late: only the kind whose next request came quickly is polled after.
    quick_kind, slow_kind = 24, 26  # AddPartitionsToTxn, EndTxn

    def frame(api_key: int) -> bytes:
        return struct.pack(">ih", 2, api_key)

    async def main() -> None:
        ours, peer = trio.socket.socketpair()
        # Quick: the next request within half of the budget, 0.5 s (the peer sends at once).
        reader = FrameReader(ours, 1 << 20, MemoryGate(1 << 20), busy_poll_s=1.0)
        async with trio.open_nursery() as nursery:

            async def send_after(pause_s: float, api_key: int) -> None:
                await trio.testing.wait_all_tasks_blocked()  # the reader waits for it
                await trio.sleep(pause_s)
                await peer.send(frame(api_key))

            await peer.send(frame(quick_kind))
            assert await reader.next_frame() == frame(quick_kind)[4:]
            nursery.start_soon(send_after, 0.0, slow_kind)  # came quickly after quick_kind
            assert await reader.next_frame() == frame(slow_kind)[4:]
            nursery.start_soon(send_after, 0.6, quick_kind)  # came late after slow_kind
            assert await reader.next_frame() == frame(quick_kind)[4:]
        assert reader._quick_after == 1 << quick_kind
        ours.close()
        peer.close()

    polling = for_this_thread()
    polling.off_until = 0.0
    trio.run(main)


def test_a_wait_within_a_frame_does_not_make_its_kind_quick() -> None:
    # A request that came late after a Produce, its second half at once after its first:
    # the Produce's peer was slow, whatever the pace within the next frame.
    produce, fetch = 0, 1

    async def main() -> None:
        ours, peer = trio.socket.socketpair()
        reader = FrameReader(ours, 1 << 20, MemoryGate(1 << 20), busy_poll_s=0.4)
        async with trio.open_nursery() as nursery:

            async def send_in_two(pause_s: float, frame: bytes) -> None:
                if pause_s:
                    await trio.sleep(pause_s)  # the reader polls, then parks
                else:
                    await trio.testing.wait_all_tasks_blocked()  # the reader waits for it
                await peer.send(frame[:6])  # length and API key
                await trio.testing.wait_all_tasks_blocked()  # the reader waits for the rest
                await peer.send(frame[6:])

            await peer.send(struct.pack(">ih", 2, produce))
            await reader.next_frame()
            nursery.start_soon(send_in_two, 0.0, struct.pack(">ihh", 4, produce, 0))
            await reader.next_frame()  # came at once after a Produce: quick
            assert reader._quick_after == 1 << produce
            nursery.start_soon(send_in_two, 0.3, struct.pack(">ihh", 4, fetch, 0))
            assert await reader.next_frame() == struct.pack(">hh", fetch, 0)
        assert reader._quick_after == 0  # came late after a Produce: slow
        ours.close()
        peer.close()

    polling = for_this_thread()
    polling.off_until = 0.0
    trio.run(main)
