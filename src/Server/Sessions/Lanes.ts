/**
 * One FIFO lane per session name: a call joins its session's lane synchronously when it starts, so calls on one
 * session run one at a time in the order they came, and a session whose lane empties is announced as idle.
 */
import { Deferred, Effect } from "effect"

/** One session name's FIFO: calls waiting or running, and the turns of those waiting, in arrival order. */
interface Lane {
  pending: number
  running: boolean
  readonly waiters: Array<Deferred.Deferred<void>>
}

export interface Lanes {
  /**
   * Joins the session's lane at once (no yield before it): `undefined` when the call may run now, else the turn it
   * waits for.
   */
  readonly enter: (name: string) => Deferred.Deferred<void> | undefined
  /** Hands the lane to the next in line, or drops a turn given up while waiting. */
  readonly leave: (name: string, turn: Deferred.Deferred<void> | undefined) => void
  /** Calls waiting or running on the session. */
  readonly pending: (name: string) => number
}

/** `onIdle` is told when a session's last call ends. */
export const make = (onIdle: () => void): Lanes => {
  const lanes = new Map<string, Lane>()

  const enter = (name: string): Deferred.Deferred<void> | undefined => {
    let lane = lanes.get(name)
    if (lane === undefined) {
      lane = { pending: 0, running: false, waiters: [] }
      lanes.set(name, lane)
    }
    lane.pending++
    if (!lane.running) {
      lane.running = true
      return undefined
    }
    const turn = Deferred.makeUnsafe<void>()
    lane.waiters.push(turn)
    return turn
  }

  const leave = (name: string, turn: Deferred.Deferred<void> | undefined) => {
    const lane = lanes.get(name)
    if (lane === undefined) return
    lane.pending--
    // A turn is completed only when handed over: an uncompleted one was given up while waiting.
    if (turn === undefined || Deferred.isDoneUnsafe(turn)) {
      const next = lane.waiters.shift()
      if (next) Deferred.doneUnsafe(next, Effect.void)
      else lane.running = false
    } else {
      lane.waiters.splice(lane.waiters.indexOf(turn), 1)
    }
    if (lane.pending === 0) {
      lanes.delete(name)
      // A session with nothing left to do may give its browser to a call waiting for a slot.
      onIdle()
    }
  }

  const pending = (name: string) => lanes.get(name)?.pending ?? 0

  return { enter, leave, pending }
}
