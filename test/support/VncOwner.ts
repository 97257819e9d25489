/**
 * A process that owns a VNC stack, for the SIGKILL test: it starts one, connects an RFB client through websockify (so
 * websockify has forked its per-client process too), prints `READY <json>` and waits to be killed.
 */
import { Effect, Logger } from "effect"
import * as Vnc from "../../src/Sandbox/Provider/Vnc.ts"

const program = Effect.gen(function* () {
  const vnc = yield* Vnc.make()
  yield* Effect.promise(
    () =>
      new Promise<void>((resolve, reject) => {
        const socket = new WebSocket(`ws://127.0.0.1:${vnc.websocketPort}/websockify`, ["binary"])
        // x11vnc speaks first: its RFB version greeting means the whole chain is connected.
        socket.addEventListener("message", () => resolve(), { once: true })
        socket.addEventListener("error", () => reject(new Error("the RFB WebSocket failed")), { once: true })
      })
  )
  const { pids, websocketPort, vncPort, display } = vnc
  process.stdout.write(`READY ${JSON.stringify({ pids, websocketPort, vncPort, display })}\n`)
  return yield* Effect.never
})

Effect.runFork(program.pipe(Effect.scoped, Effect.provide(Logger.layer([]))))
