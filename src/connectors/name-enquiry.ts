// The name enquiry of a key mode (decisions §11, §13): its transfers connectors in priority order,
// the next one asked when one is down (a transient fault), as a transfer's own name enquiry does.
// Each enquiry holds one of its connector's slots (./name-enquiry-slots.ts); no slot free in time
// is no answer, and no other connector is asked.
import { ProviderError } from './capabilities.ts';
import type { NameEnquirySlots } from './name-enquiry-slots.ts';
import { type Providers, serving } from './registry.ts';
import type { KeyMode } from './types.ts';

export async function enquireName(
  deps: { providers: Providers; slots: NameEnquirySlots },
  tenantId: string,
  mode: KeyMode,
  bankCode: string,
  accountNumber: string,
): Promise<{ accountName: string }> {
  let fault: unknown = new Error(`no ${mode} connector serves transfers`);
  for (const connector of serving(deps.providers, mode, 'transfers')) {
    try {
      return await deps.slots.run(connector.name, tenantId, () =>
        connector.transfers!.nameEnquiry(bankCode, accountNumber),
      );
    } catch (error) {
      if (!(error instanceof ProviderError) || !error.transient) throw error;
      fault = error;
    }
  }
  throw fault;
}
