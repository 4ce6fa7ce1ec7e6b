// Tests use the same real redis-server launcher as npm start and the benchmarks.
export { startRedis, type RedisFixture } from "../../host-test/redis-server.js";
