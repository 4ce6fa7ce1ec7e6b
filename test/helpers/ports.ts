export { freePort } from "../../host-test/ports.js";
