"""Reads that decide writes on versioned and unversioned rows, and inserts after an absence check."""

from sqlalchemy import select, update

from alerts.models import Account, Alert, Hook, Release, Silence, Trial


def deploy_hook(session, hook_id, deployer):
    hook = session.get(Hook, hook_id)
    if hook.deployed:
        return
    hook.deployed = True  # ok: IDM101 the flush compares version_id: a second run's flush fails
    session.commit()
    deployer.deploy(hook_id)


def deploy_release(session, release_id, deployer):
    release = session.get(Release, release_id)
    if release.deployed:
        return
    release.deployed = True  # expect: IDM101 "release.deployed = ... (saved later) is decided by deployed"
    session.commit()
    deployer.deploy(release_id)


def deploy_hook_in_bulk(session, hook_id, deployer):
    hook = session.get(Hook, hook_id)
    if hook.deployed:
        return
    session.execute(update(Hook).where(Hook.id == hook_id).values(deployed=True))  # expect: IDM101 a bulk UPDATE compares no version
    session.commit()
    deployer.deploy(hook_id)


def record_alert(session, fingerprint, starts_at):
    found = session.execute(
        select(Alert).where(Alert.fingerprint == fingerprint, Alert.starts_at == starts_at)
    ).scalar_one_or_none()
    if found is not None:
        return found
    alert = Alert(fingerprint=fingerprint, starts_at=starts_at, status="firing")
    session.add(alert)  # ok: IDM101 the named unique index keeps (fingerprint, starts_at) unique
    session.commit()
    return alert


def record_silence(session, fingerprint):
    found = session.execute(
        select(Silence).where(Silence.fingerprint == fingerprint, Silence.status == "active")
    ).scalar_one_or_none()
    if found is not None:
        return found
    silence = Silence(fingerprint=fingerprint, status="active")
    session.add(silence)  # expect: IDM101 "inserts the silence row" an index that is not unique keeps nothing
    session.commit()
    return silence


def start_trial(session, user_id):
    found = session.execute(select(Trial).where(Trial.user_id == user_id)).scalar_one_or_none()
    if found is not None:
        return found
    trial = Trial(user_id=user_id, status="trial")
    session.add(trial)  # expect: IDM101 "inserts the trial row" unique only among active rows
    session.commit()
    return trial


def open_account(session, email, tenant_id):
    found = session.execute(
        select(Account).where(Account.email == email, Account.tenant_id == tenant_id)
    ).scalar_one_or_none()
    if found is not None:
        return found
    account = Account(email=email, tenant_id=tenant_id)
    session.add(account)  # ok: IDM101 the index keeps lower(email) unique: the same email clashes there too
    session.commit()
    return account
