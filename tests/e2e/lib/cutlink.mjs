// A link between the app and a test host that can be cut: a TCP relay on 127.0.0.1 in front of
// sshd. `cut()` drops every carried connection at once and refuses new ones, as a laptop that
// loses its network does to a rented machine; `restore()` lets connections through again. The
// job on the host is not touched: only the path to it goes away. `stall()` holds back what the host
// sends (a link that stops carrying, the connection still open) until `flow()`.
import net from 'node:net'

export async function startCutLink(targetPort) {
  let cut = false
  let stalled = false
  const carried = new Set()
  const server = net.createServer((client) => {
    if (cut) {
      client.destroy()
      return
    }
    const upstream = net.connect(targetPort, '127.0.0.1')
    const pair = { client, upstream }
    carried.add(pair)
    const drop = () => {
      carried.delete(pair)
      client.destroy()
      upstream.destroy()
    }
    client.on('error', drop)
    upstream.on('error', drop)
    client.on('close', drop)
    upstream.on('close', drop)
    client.pipe(upstream)
    if (!stalled) upstream.pipe(client)
  })
  await new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', resolve)
  })
  return {
    port: server.address().port,
    /** Connections carried right now. */
    get connections() {
      return carried.size
    },
    cut() {
      cut = true
      for (const { client, upstream } of carried) {
        client.destroy()
        upstream.destroy()
      }
      carried.clear()
    },
    restore() {
      cut = false
    },
    /** Hold back everything the host sends; nothing is dropped. */
    stall() {
      stalled = true
      for (const { client, upstream } of carried) upstream.unpipe(client)
    },
    flow() {
      stalled = false
      for (const { client, upstream } of carried) upstream.pipe(client)
    },
    async stop() {
      this.cut()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}
