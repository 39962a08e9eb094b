// The floor of a GET: Fastify's hello world, in its own process like the API. Prints its port.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/hello', async () => ({ hello: 'world' }));
const address = await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`${new URL(address).port}\n`);
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
