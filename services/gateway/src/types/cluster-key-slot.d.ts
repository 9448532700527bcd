/** The hash slot (0–16383) Redis Cluster assigns a key: CRC16 of its hash tag, or of the whole key. */
declare module 'cluster-key-slot' {
  export default function calculateSlot(key: string | Buffer): number;
}
